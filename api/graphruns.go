package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// executeGraph starts an execution of one or more graph types on a cluster
// or a subset of its nodes. Everything is checked first (the types exist
// and merge into valid graphs, the nodes and tasks exist and the graphs
// expand onto the nodes), so a request that cannot run is refused with
// every problem and nothing starts. Each merged graph is stored as a
// snapshot; the execution works from those.
func (s *server) executeGraph(c echo.Context) error {
	var req model.GraphExecutionRequest
	if err := decodeJSON(c, &req, true); err != nil {
		return err
	}
	var details []model.ErrorDetail
	problem := func(path, format string, args ...any) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	types := req.Types
	switch {
	case req.Type != "" && len(req.Types) > 0:
		problem("types", "give type or types, not both")
	case req.Type != "":
		types = []string{req.Type}
	case len(types) == 0:
		types = []string{model.DefaultGraphType}
	}
	for i, t := range types {
		if !validID(t) {
			problem(fmt.Sprintf("types[%d]", i), "graph type %q must be 1-128 letters, digits, '-', '_' or '.'", t)
		} else if slices.Index(types, t) < i {
			problem(fmt.Sprintf("types[%d]", i), "graph type %q is listed twice", t)
		}
	}
	if req.OnFailure != "" && !slices.Contains(onFailures, req.OnFailure) {
		problem("onFailure", "onFailure %q is not one of %s", req.OnFailure, joinQuoted(onFailures))
	}
	if req.Parallelism < 0 {
		problem("parallelism", "parallelism must be positive")
	}
	for i, e := range req.Events {
		if !validID(e) {
			problem(fmt.Sprintf("events[%d]", i), "event %q must be 1-128 letters, digits, '-', '_' or '.'", e)
		}
	}
	if len(details) > 0 {
		return &Error{Status: http.StatusBadRequest, Message: "invalid execution request", Details: details}
	}

	ctx := c.Request().Context()
	id := c.Param("id")
	cl, err := s.store.GetCluster(ctx, id)
	if err != nil {
		return storeError(err, fmt.Sprintf("cluster %q", id))
	}
	for i, n := range req.Nodes {
		if n != model.ControlPlane && cl.Node(n) == nil {
			problem(fmt.Sprintf("nodes[%d]", i), "cluster %q has no node %q", id, n)
		}
	}
	var contents [][]byte
	seenTasks := map[string]bool{}
	for i, t := range types {
		merged, found, err := s.mergeGraph(ctx, cl, t)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Status == http.StatusUnprocessableEntity {
				for _, d := range e.Details {
					d.Message = fmt.Sprintf("graph %q: %s", t, d.Message)
					details = append(details, d)
				}
				continue
			}
			return err
		}
		if !found {
			problem(fmt.Sprintf("types[%d]", i), "no graph of type %q in cluster %q, its release or its plugins", t, id)
			continue
		}
		for _, task := range merged.Tasks {
			seenTasks[task.ID] = true
		}
		// Expanding here catches what only the cluster's nodes reveal
		// (roles that select nothing a task needs, cross-node cycles).
		_, err = graphs.Expand(merged, cl.Nodes, graphs.ExpandOptions{Nodes: req.Nodes, Tasks: onlyKnown(req.Tasks, merged), Catalogue: s.catalogue})
		if err != nil {
			if ds, ok := documentDetails(err); ok {
				for _, d := range ds {
					d.Message = fmt.Sprintf("graph %q: %s", t, d.Message)
					details = append(details, d)
				}
			} else {
				problem(fmt.Sprintf("types[%d]", i), "graph %q: %v", t, err)
			}
			continue
		}
		content, err := graphs.MarshalGraph(merged, "json")
		if err != nil {
			return internalError(fmt.Errorf("encode graph snapshot: %w", err))
		}
		contents = append(contents, content)
	}
	for i, task := range req.Tasks {
		if !seenTasks[task] && len(contents) == len(types) {
			problem(fmt.Sprintf("tasks[%d]", i), "no task %q in the graphs of type %v", task, types)
		}
	}
	if len(details) > 0 {
		return invalid("the execution cannot run as asked", details)
	}
	run := starter.GraphRun{
		ClusterID: cl.ID, Types: types, Nodes: req.Nodes, Tasks: req.Tasks,
		DryRun: req.DryRun, Noop: req.Noop, Force: req.Force, OnFailure: req.OnFailure, Parallelism: req.Parallelism,
		Events: req.Events,
	}
	// The executor's own check, so nothing is started that its prepare
	// step would refuse.
	if err := starter.ValidateGraph(ctx, s.store, s.catalogue, run); err != nil {
		if errors.Is(err, starter.ErrInvalidGraphRun) {
			return invalid("the execution cannot run as asked", []model.ErrorDetail{{Document: requestSource, Message: err.Error()}})
		}
		return internalError(err)
	}
	if s.exec == nil {
		return errNoExecutions()
	}
	hashes := make([]string, len(contents))
	for i, content := range contents {
		if hashes[i], err = s.store.PutSnapshot(ctx, SnapshotGraph, content); err != nil {
			return storeError(err, "graph snapshot")
		}
	}
	run.Snapshots = hashes
	ex, err := s.exec.StartGraph(ctx, run)
	if err != nil {
		return s.executionError(err, "")
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	return c.JSON(http.StatusAccepted, s.present(fromStarter(ex)))
}

// onlyKnown keeps the requested tasks the graph has, so one graph of
// several can be checked with a task list that spans them (nil when it has
// none of them: the check then covers the whole graph).
func onlyKnown(tasks []string, g *model.Graph) []string {
	if len(tasks) == 0 {
		return nil
	}
	var out []string
	for _, t := range g.Tasks {
		if slices.Contains(tasks, t.ID) {
			out = append(out, t.ID)
		}
	}
	return out
}
