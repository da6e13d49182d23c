package graphs

import (
	"maps"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// specDepRefs lists the dependencies the expressions of r's spec read, in
// path order, each once per path. The kind's verbatim attributes are
// templates of their own, rendered with the resource's vars, and are
// skipped; names computed at run time cannot be seen.
//
// A kind with dependency aliases (kinds.Kind.Aliases) adds each alias's
// target, at the alias's path, and an expression reading an alias reads
// its target.
func specDepRefs(lookup func(string) (*kinds.Kind, bool), r *model.Resource) []expr.DepRef {
	if len(r.Spec) == 0 {
		return nil
	}
	var verbatim []string
	var aliases map[string]string
	if k, ok := lookup(r.Kind); ok {
		verbatim = k.Verbatim
		if k.Aliases {
			aliases = kinds.DepAliases(r.Spec)
		}
	}
	refs := expr.ScanDeps(r.Spec, "spec", func(key string) bool {
		return slices.Contains(verbatim, key) || (aliases != nil && key == kinds.DepAliasAttr)
	})
	if aliases == nil {
		return refs
	}
	out := make([]expr.DepRef, 0, len(aliases)+len(refs))
	for _, alias := range slices.Sorted(maps.Keys(aliases)) {
		out = append(out, expr.DepRef{Name: aliases[alias], Path: nested.Key("spec."+kinds.DepAliasAttr, alias)})
	}
	for _, ref := range refs {
		if target, ok := aliases[ref.Name]; ok {
			ref.Name = target
		}
		out = append(out, ref)
	}
	return out
}

// depIndex resolves the names expressions give dependencies to resources
// of a package, as the executor does when the step runs: "Kind/name" with
// the kind compared case-insensitively, or a bare name.
type depIndex struct {
	keys   map[string]model.Ref   // Ref.Key() → ref
	byName map[string][]model.Ref // metadata.name → refs
}

func newDepIndex(refs []model.Ref) *depIndex {
	x := &depIndex{keys: make(map[string]model.Ref, len(refs)), byName: map[string][]model.Ref{}}
	for _, r := range refs {
		x.keys[r.Key()] = r
		x.byName[r.Name] = append(x.byName[r.Name], r)
	}
	return x
}

// resolve returns the resources name refers to: none when it names no
// resource of the package, one, or several when a bare name is shared by
// resources of different kinds (the expression then cannot be ordered
// statically). A "@node" suffix, the form of a step on a node, is
// ignored.
func (x *depIndex) resolve(name string) []model.Ref {
	name, _, _ = strings.Cut(name, "@")
	if ref, ok := model.ParseRef(name); ok {
		if r, ok := x.keys[ref.Key()]; ok {
			return []model.Ref{r}
		}
		return nil
	}
	return x.byName[name]
}
