package graphs

import (
	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

// Relation is how a resource refers to another.
type Relation string

// Relations, in the order a resource's references are checked.
const (
	RelDependsOn   Relation = "dependsOn"
	RelAssociation Relation = "associations"
	RelNotify      Relation = "notify"
	RelSubscribe   Relation = "subscribe"
	// RelExpression is a dependency an expression of the spec reads, by
	// "Kind/name" or by bare name (IndexRef.Name).
	RelExpression Relation = "expression"
)

// IndexEntry is what the checks that span a package's documents need of
// one resource: its identity, where it is, and its references with where
// each is written. Parse keeps one per resource, so the documents' trees
// can go as soon as each is read; a package read in parts is checked
// whole from its parts' entries (CheckIndex).
type IndexEntry struct {
	Kind string `json:"k"`
	Name string `json:"n"`
	// Pos is the resource's document; NamePos its metadata.name.
	Pos     model.Position `json:"p"`
	NamePos model.Position `json:"np"`
	Refs    []IndexRef     `json:"r,omitempty"`
}

// IndexRef is one reference of a resource: the relation, the resource it
// names (an expression's Name may be a bare name, Kind empty), and the
// path and position it is written at.
type IndexRef struct {
	Rel  Relation       `json:"rel"`
	Kind string         `json:"k,omitempty"`
	Name string         `json:"n"`
	Path string         `json:"path"`
	Pos  model.Position `json:"p"`
}

func (e *IndexEntry) ref() model.Ref { return model.Ref{Kind: e.Kind, Name: e.Name} }

// CheckIndex checks what spans a package's documents, over the entries of
// all its resources in package order: every identity unique, every
// reference to a resource of the package, no dependency cycle. A
// reference is an edge as Parse orders resources (notify the reverse
// one); an expression's bare name read by resources of several kinds
// orders nothing. Cost: linear in entries and references, plus the cycle
// search of the dependency graph.
func CheckIndex(entries []IndexEntry) Errors {
	c := &collector{}
	checkIndex(entries, c)
	return c.errs.Sort()
}

// checkIndex is CheckIndex into a collector.
func checkIndex(entries []IndexEntry, c *collector) {
	byKey := make(map[string]*IndexEntry, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.Kind == "" || e.Name == "" {
			continue
		}
		key := e.ref().Key()
		if first, dup := byKey[key]; dup {
			c.add(e.NamePos, "metadata.name", "duplicate resource %s: first defined at %s", e.ref(), first.Pos)
			continue
		}
		byKey[key] = e
	}

	var near *suggester
	suggestion := func(name string) string {
		if near == nil {
			names := make([]string, 0, len(byKey))
			for _, e := range byKey {
				names = append(names, e.ref().String())
			}
			near = newSuggester(names)
		}
		return suggest.Mean(near.near(name))
	}
	var deps *depIndex
	g := dag.NewWithCapacity(len(byKey))
	for i := range entries {
		e := &entries[i]
		if e.Kind == "" || e.Name == "" || byKey[e.ref().Key()] != e {
			continue
		}
		from := e.ref().Key()
		g.Add(from)
		for _, ref := range e.Refs {
			if ref.Rel == RelExpression {
				if deps == nil {
					refs := make([]model.Ref, 0, len(byKey))
					for _, e := range byKey {
						refs = append(refs, e.ref())
					}
					deps = newDepIndex(refs)
				}
				targets := deps.resolve(ref.Name)
				if len(targets) == 0 {
					c.add(ref.Pos, ref.Path, "reads dependency %q: no such resource in the package%s", ref.Name, suggestion(ref.Name))
					continue
				}
				if len(targets) == 1 {
					g.Connect(from, targets[0].Key())
				}
				continue
			}
			r := model.Ref{Kind: ref.Kind, Name: ref.Name}
			target, ok := byKey[r.Key()]
			if !ok {
				c.add(ref.Pos, ref.Path, "%s %s: no such resource in the package%s", ref.Rel.verb(), r, suggestion(r.String()))
				continue
			}
			// notify orders its targets after the resource; the others
			// order the resource after them.
			if ref.Rel == RelNotify {
				g.Connect(target.ref().Key(), from)
			} else {
				g.Connect(from, target.ref().Key())
			}
		}
	}
	for _, cycle := range g.Cycles() {
		names := make([]string, len(cycle))
		for i, key := range cycle {
			names[i] = byKey[key].ref().String()
		}
		c.add(byKey[cycle[0]].Pos, "dependsOn", "dependency cycle: %s", dag.FormatCycle(names))
	}
}

// verb is how an error names the relation.
func (r Relation) verb() string {
	switch r {
	case RelAssociation:
		return "associated with"
	case RelNotify:
		return "notifies"
	case RelSubscribe:
		return "subscribes to"
	default:
		return "depends on"
	}
}
