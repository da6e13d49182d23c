package prepare

import (
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// Preparer prepares graph executions over a store: the one merge of graph
// layers, the one check and expansion of a request (Check, Pin), and an
// execution's preparation of its pinned steps (Prepare). Build one in the
// composition root and share it: it keeps no state but its counters, and
// is safe for concurrent use.
type Preparer struct {
	st    GraphStore
	cat   *kinds.Catalogue
	files Files
	counters
}

// NewPreparer returns a Preparer over st; cat maps task types onto kinds (nil:
// kinds.Builtin()), files is where copy_files steps read their sources.
func NewPreparer(st GraphStore, cat *kinds.Catalogue, files Files) *Preparer {
	if cat == nil {
		cat = kinds.Builtin()
	}
	return &Preparer{st: st, cat: cat, files: files}
}

// expandedType is one graph type of a request as Check expanded it.
type expandedType struct {
	Type string
	// Merged is the graph as its layers merged, placeholders unresolved
	// (Check only: Pin stores it as the type's "graph" snapshot).
	Merged *model.Graph
	// Graph has the cluster's placeholder values: the steps came from it.
	Graph *model.Graph
	Steps []*model.Step
}
