package prepare

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// requestDocument names the request in the details of its problems, as the
// HTTP API names a request body.
const requestDocument = "request"

// Checked is a graph execution request Check found runnable, with what it
// merged and expanded; Pin stores it.
type Checked struct {
	// Request is the request with Types set (Type folded into it).
	Request contract.GraphRequest
	Cluster *model.Cluster
	types   []expandedType
}

// Check validates a graph execution request against the store without
// starting anything, so a caller can answer at once with every problem:
// the cluster's nodes the request names exist; each type's layers merge
// (once) into a valid graph, its placeholders have values, and it expands
// (once) onto the nodes with its cross dependencies; the tasks it names
// are in some type. Problems are one *Problems listing them all; a
// missing cluster is the store's not-found error; other store failures
// are returned as they are. Cost: one merge and one expansion per type.
func (p *Preparer) Check(ctx context.Context, req contract.GraphRequest) (*Checked, error) {
	if req.ClusterID == "" {
		return nil, invalidGraph("no cluster given")
	}
	var ds []model.ErrorDetail
	problem := func(path, format string, args ...any) {
		ds = append(ds, model.ErrorDetail{Document: requestDocument, Path: path, Message: fmt.Sprintf(format, args...)})
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
	c, err := p.st.GetCluster(ctx, req.ClusterID)
	if err != nil {
		return nil, err
	}
	for i, n := range req.Nodes {
		if n != model.ControlPlane && c.Node(n) == nil {
			problem(fmt.Sprintf("nodes[%d]", i), "cluster %q has no node %q", c.ID, n)
		}
	}
	values, err := placeholderValues(ctx, p.st, c)
	if err != nil {
		return nil, err
	}
	// Cross dependencies written as yaql read each node's deployment data
	// and history as the execution will; nothing is kept.
	fuel, err := newYAQLEnv(ctx, p.st, c, "", false, newNodeHistory(p.st, c.ID, req.Force))
	if err != nil {
		return nil, err
	}
	checked := &Checked{Cluster: c}
	known := map[string]bool{} // tasks of the types that merged
	for i, typ := range types {
		path := fmt.Sprintf("types[%d]", i)
		if slices.Index(types, typ) < i {
			problem(path, "graph type %q is listed twice", typ)
			continue
		}
		prefix := fmt.Sprintf("graph %q: ", typ)
		merged, found, err := p.Merge(ctx, c, typ, nil)
		var pr *Problems
		if errors.As(err, &pr) {
			for _, d := range pr.Details {
				d.Message = prefix + d.Message
				ds = append(ds, d)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !found {
			problem(path, "no graph of type %q in cluster %q, its release or its plugins", typ, c.ID)
			continue
		}
		merged.Type = typ
		for _, t := range merged.Tasks {
			known[t.ID] = true
		}
		g, err := graphs.ResolvePlaceholders(merged, values)
		if err != nil {
			for _, e := range unjoin(err) {
				problem(path, "%s%v", prefix, e)
			}
			continue
		}
		// A task subset may span several types: each type gets the tasks
		// it has, and a type with none of them runs nothing.
		var only []string
		for _, t := range g.Tasks {
			if slices.Contains(req.Tasks, t.ID) {
				only = append(only, t.ID)
			}
		}
		p.expansions.Add(1)
		steps, err := graphs.Expand(g, c.Nodes, graphs.ExpandOptions{Nodes: req.Nodes, Tasks: only, Catalogue: p.cat, CrossDeps: fuel.crossDeps(ctx)})
		if fuel.failed != nil {
			return nil, fuel.failed // a store failure, not a problem of the graph
		}
		if err != nil {
			if eds, ok := graphDetails(err, prefix); ok {
				ds = append(ds, eds...)
			} else {
				problem(path, "%s%v", prefix, err)
			}
			continue
		}
		if len(req.Tasks) > 0 && len(only) == 0 {
			for _, s := range steps {
				s.Kind, s.Spec, s.Skipped = model.TaskSkipped, nil, true
			}
		}
		checked.types = append(checked.types, expandedType{Type: typ, Merged: merged, Graph: g, Steps: steps})
	}
	if len(checked.types) == len(types) {
		for i, t := range req.Tasks {
			if !known[t] {
				problem(fmt.Sprintf("tasks[%d]", i), "no task %q in the graphs of type %v", t, types)
			}
		}
	}
	if len(ds) > 0 {
		return nil, &Problems{Message: "the execution cannot run as asked", Details: ds}
	}
	req.Type, req.Types = "", types
	checked.Request = req
	return checked, nil
}

// Pin stores what Check validated and returns the request pinned to it:
// each merged graph as a "graph" snapshot (Snapshots[i] is Types[i]'s) and
// the expanded steps of every type as one "graph-steps" snapshot
// (Expansion). An execution of the pinned request runs those steps, and so
// does every retry of it. Cost: one snapshot write per type, plus one.
func (p *Preparer) Pin(ctx context.Context, c *Checked) (contract.GraphRequest, error) {
	req := c.Request
	req.Snapshots = make([]string, len(c.types))
	for i, et := range c.types {
		content, err := graphs.MarshalGraph(et.Merged, "json")
		if err != nil {
			return req, fmt.Errorf("encode graph %q: %w", et.Type, err)
		}
		if req.Snapshots[i], err = p.st.PutSnapshot(ctx, GraphSnapshotKind, content); err != nil {
			return req, err
		}
	}
	content, err := encodeExpansion(req, c.types)
	if err != nil {
		return req, err
	}
	if req.Expansion, err = p.st.PutSnapshot(ctx, ExpansionSnapshotKind, content); err != nil {
		return req, err
	}
	return req, nil
}

// unjoin lists the errors errors.Join put together (err alone otherwise).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
