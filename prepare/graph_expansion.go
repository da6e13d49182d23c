package prepare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Snapshot kinds of graph executions.
const (
	// GraphSnapshotKind is a merged graph (graphs.MarshalGraph's JSON).
	GraphSnapshotKind = "graph"
	// ExpansionSnapshotKind is the expanded steps of a request's graph
	// types (expansionDoc's JSON).
	ExpansionSnapshotKind = "graph-steps"
)

// expansionDoc is the content of a "graph-steps" snapshot: the request it
// was expanded for (cluster, node and task subsets) and per type, in
// order, the graph the steps came from (placeholders resolved, which task
// digests, strategies, lifecycles and fault tolerances are read from) and
// the steps. JSON, so equal expansions share one snapshot.
type expansionDoc struct {
	Cluster string           `json:"cluster"`
	Nodes   []string         `json:"nodes,omitempty"`
	Tasks   []string         `json:"tasks,omitempty"`
	Types   []expansionEntry `json:"types"`
}

type expansionEntry struct {
	Type  string          `json:"type"`
	Graph json.RawMessage `json:"graph"`
	Steps []*model.Step   `json:"steps"`
}

func encodeExpansion(req contract.GraphRequest, types []expandedType) ([]byte, error) {
	doc := expansionDoc{Cluster: req.ClusterID, Nodes: req.Nodes, Tasks: req.Tasks, Types: make([]expansionEntry, len(types))}
	for i, et := range types {
		g, err := graphs.MarshalGraph(et.Graph, "json")
		if err != nil {
			return nil, fmt.Errorf("encode graph %q: %w", et.Type, err)
		}
		doc.Types[i] = expansionEntry{Type: et.Type, Graph: g, Steps: et.Steps}
	}
	return doc.encode()
}

// loadExpansion reads the pinned expansion of req on cluster c. The
// request's expansion hash is a claim (whoever starts a workflow names
// it): the expansion must have been made for this cluster, these graph
// types and these node and task subsets, and every step must be on a node
// the cluster has, so one cluster's steps never run on another's nodes.
// Cost: one store read, one parse per type, the steps decoded one at a
// time with their repeated strings shared (expansionEntry.UnmarshalJSON);
// neither merge nor expansion.
func (p *Preparer) loadExpansion(ctx context.Context, req contract.GraphRequest, c *model.Cluster) ([]expandedType, error) {
	hash, types := req.Expansion, req.Types
	if hash == "" {
		return nil, invalidGraph("the request is not pinned: no expansion (the API validates and pins every graph execution)")
	}
	snap, err := p.st.GetSnapshot(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalidGraph("expansion %s not found", hashPrefix(hash))
	}
	if err != nil {
		return nil, err
	}
	if snap.Kind != ExpansionSnapshotKind {
		return nil, invalidGraph("snapshot %s is not an expansion", hashPrefix(hash))
	}
	var doc expansionDoc
	if err := json.Unmarshal(snap.Content, &doc); err != nil {
		return nil, invalidGraph("expansion %s: %v", hashPrefix(hash), err)
	}
	got := make([]string, len(doc.Types))
	for i, e := range doc.Types {
		got[i] = e.Type
	}
	if !slices.Equal(got, types) {
		return nil, invalidGraph("expansion %s is of graph types %v, the request of %v", hashPrefix(hash), got, types)
	}
	if doc.Cluster != c.ID || !slices.Equal(doc.Nodes, req.Nodes) || !slices.Equal(doc.Tasks, req.Tasks) {
		return nil, invalidGraph("expansion %s was made for cluster %q (nodes %v, tasks %v), not for this request", hashPrefix(hash), doc.Cluster, doc.Nodes, doc.Tasks)
	}
	nodes := make(map[string]bool, len(c.Nodes))
	for _, n := range c.Nodes {
		nodes[n.ID], nodes[n.Name] = true, true
	}
	out := make([]expandedType, len(doc.Types))
	for i, e := range doc.Types {
		g, err := graphs.ParseGraph(graphs.Options{Catalogue: p.cat}, graphs.Source{
			Name: "graph " + e.Type + " (expansion " + hashPrefix(hash) + ")", Data: e.Graph, Format: graphs.FormatJSON,
		})
		if err != nil {
			return nil, invalidGraph("graph %q: %v", e.Type, err)
		}
		g.Type = e.Type
		for _, st := range e.Steps {
			if st.Node != "" && !nodes[st.Node] {
				return nil, invalidGraph("graph %q: step %s is on node %q, which cluster %q no longer has: execute the graph anew", e.Type, st.ID, st.Node, c.ID)
			}
		}
		out[i] = expandedType{Type: e.Type, Graph: g, Steps: e.Steps}
	}
	return out, nil
}

// hashPrefix is a snapshot hash as people read it.
func hashPrefix(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
