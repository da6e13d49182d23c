package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// executeGraph starts an execution of one or more graph types on a cluster
// or a subset of its nodes. The request is checked once, through prepare
// (the types exist, merge into valid graphs, have their placeholders'
// values and expand onto the nodes; the nodes and tasks exist), so a
// request that cannot run is refused with every problem and nothing
// starts. What was checked is pinned: each merged graph and the expanded
// steps are stored as snapshots the request names, and the execution (and
// any retry of it) runs those steps.
func (s *server) executeGraph(c echo.Context) error {
	var req contract.GraphRequest
	if err := decodeJSON(c, &req, true); err != nil {
		return err
	}
	var details []model.ErrorDetail
	problem := func(path, format string, args ...any) {
		details = append(details, model.ErrorDetail{Document: requestSource, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	for _, f := range req.ServerFields() {
		problem(f, "%s is set by the server, not by a request", f)
	}
	types := req.Types
	switch {
	case req.Type != "" && len(req.Types) > 0:
		problem("types", "give type or types, not both")
	case req.Type != "":
		types = []string{req.Type}
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
	req.ClusterID = id
	checked, err := s.graphs.Check(ctx, req)
	if err != nil {
		return graphError(err, id)
	}
	if s.exec == nil {
		return errNoExecutions()
	}
	var approval *contract.ApprovalSettings
	if !req.DryRun {
		if approval, err = s.clusterApproval(c, id); err != nil {
			return err
		}
	}
	pinned, err := s.graphs.Pin(ctx, checked)
	if err != nil {
		return storeError(err, "graph snapshot")
	}
	if approval != nil {
		ex, err := s.exec.StartGraphApproval(ctx, pinned, approval)
		if err != nil {
			return s.executionError(err, "")
		}
		return s.answerAwaiting(c, fromStarter(ex))
	}
	ex, err := s.exec.StartGraph(ctx, pinned)
	if err != nil {
		return s.executionError(err, "")
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/executions/"+ex.ID)
	return c.JSON(http.StatusAccepted, s.present(fromStarter(ex)))
}

// graphError answers a failed check or merge of graphs: 422 with every
// problem, 404 for a cluster that is not there, 500 for the rest.
func graphError(err error, cluster string) error {
	var p *prepare.Problems
	switch {
	case errors.As(err, &p):
		return invalid(p.Message, p.Details)
	case errors.Is(err, prepare.ErrInvalidGraph):
		return invalid("the execution cannot run as asked", []model.ErrorDetail{{Document: requestSource, Message: prepare.InvalidReason(err)}})
	case errors.Is(err, store.ErrNotFound):
		return storeError(err, fmt.Sprintf("cluster %q", cluster))
	}
	return internalError(err)
}

// registerGraphMetrics exposes the preparer's counts of merges and
// expansions: each graph execution request costs one of each per type.
func registerGraphMetrics(reg prometheus.Registerer, p *prepare.Preparer) error {
	for _, m := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cairn_graph_merges_total",
			Help: "Merges of a graph type's layers (release, cluster, plugins).",
		}, func() float64 { return float64(p.Merges()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cairn_graph_expansions_total",
			Help: "Expansions of a merged graph onto a cluster's nodes.",
		}, func() float64 { return float64(p.Expansions()) }),
	} {
		if err := reg.Register(m); err != nil {
			return fmt.Errorf("register graph metrics: %w", err)
		}
	}
	return nil
}
