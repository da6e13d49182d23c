package graphs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/dag"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// validate checks what spans documents: identity, references and cycles
// of the resources (from their index entries: each resource's own checks
// ran when it was read, see settle), and each graph whole.
func (p *parser) validate() {
	if !p.opts.Part {
		checkIndex(p.index(), p.c)
	}
	for _, g := range p.graphs {
		checkGraph(p.cat, g, p.opts.Partial, p.c)
	}
}

// ValidatePackage checks a package built or changed in code with the
// rules Parse applies: known kinds, unique Kind/name, references, cycles
// and specs. Positions come from each resource's Pos; paths are relative
// to the resource, as Parse reports them.
func ValidatePackage(cat *kinds.Catalogue, pkg *model.Package) Errors {
	if cat == nil {
		cat = kinds.Builtin()
	}
	c := &collector{}
	index := make([]IndexEntry, len(pkg.Resources))
	for i, r := range pkg.Resources {
		e := &resourceEntry{r: r}
		for j := range r.DependsOn {
			e.depPaths = append(e.depPaths, nested.Index("dependsOn", j))
		}
		for j := range r.Associations {
			e.assocPaths = append(e.assocPaths, nested.Index("associations", j))
		}
		for j := range r.Notify {
			e.notifyPaths = append(e.notifyPaths, nested.Index("notify", j))
		}
		for j := range r.Subscribe {
			e.subPaths = append(e.subPaths, nested.Index("subscribe", j))
		}
		switch _, known := cat.Lookup(r.Kind); {
		case r.Kind == "":
			c.add(r.Pos, "kind", "missing kind")
		case !known:
			c.add(r.Pos, "kind", "%s", unknownKind(cat, r.Kind))
		default:
			e.kindKnown = true
		}
		if r.Name == "" {
			c.add(r.Pos, "metadata.name", "missing metadata.name")
		}
		checkSpec(cat, e, c)
		index[i] = indexEntry(cat.Lookup, e)
	}
	checkIndex(index, c)
	return c.errs.Sort()
}

// ValidateGraph checks a whole graph — typically the merge of its layers —
// with the rules Parse applies: unique ids, known types, references,
// cycles, conditions and parameters. Positions come from each task's Pos
// (the document the task, or its last override, came from); paths start
// with the task's index in g ("tasks[3].requires[0]").
func ValidateGraph(cat *kinds.Catalogue, g *model.Graph) Errors {
	if cat == nil {
		cat = kinds.Builtin()
	}
	c := &collector{}
	ge := &graphEntry{g: g, tasks: make([]*taskEntry, 0, len(g.Tasks))}
	// Tasks share a handful of types: look each up once.
	knownType := map[string]bool{}
	entries := make([]taskEntry, len(g.Tasks))
	for i, t := range g.Tasks {
		e := &entries[i]
		e.t, e.path = t, "tasks["+strconv.Itoa(i)+"]"
		if t.ID == "" {
			c.add(t.Pos, e.path+".id", "missing task id")
		}
		known, seen := knownType[t.Type]
		if !seen {
			_, known = cat.Lookup(t.Type)
			knownType[t.Type] = known
		}
		switch {
		case t.Type == "":
			c.add(t.Pos, e.path+".type", "missing task type")
		case !known:
			c.add(t.Pos, e.path+".type", "unknown task type %q%s", t.Type, suggest.Mean(cat.Suggest(t.Type)))
		default:
			e.typeKnown = true
		}
		ge.tasks = append(ge.tasks, e)
	}
	checkGraph(cat, ge, false, c)
	return c.errs.Sort()
}

// checkSpec checks a resource's spec against its kind (or, for a kind
// that is not known, only its expressions), at the spec's positions.
func checkSpec(cat *kinds.Catalogue, e *resourceEntry, c *collector) {
	if !e.kindKnown {
		// No schema to check against, but expressions can still be.
		for _, is := range expr.CheckSpec(e.r.Spec) {
			path := nested.Key("spec", is.Path)
			c.add(e.pos(path, false), path, "%s", is.Message)
		}
		return
	}
	for _, se := range cat.ValidateSpec(e.r.Kind, e.r.Spec) {
		c.add(e.pos(se.Path, strings.HasPrefix(se.Message, "unknown field")), se.Path, "%s", se.Message)
	}
	warnLiteralSecrets(cat, e, c)
}

// indexEntry is the index entry of a resource: its references with the
// positions they are written at (while its document is at hand).
func indexEntry(lookup func(string) (*kinds.Kind, bool), e *resourceEntry) IndexEntry {
	r := e.r
	out := IndexEntry{Kind: r.Kind, Name: r.Name, Pos: r.Pos, NamePos: e.pos("metadata.name", false)}
	n := len(r.DependsOn) + len(r.Associations) + len(r.Notify) + len(r.Subscribe)
	deps := specDepRefs(lookup, r)
	if n+len(deps) > 0 {
		out.Refs = make([]IndexRef, 0, n+len(deps))
	}
	add := func(rel Relation, refs []model.Ref, paths []string) {
		for i, ref := range refs {
			out.Refs = append(out.Refs, IndexRef{Rel: rel, Kind: ref.Kind, Name: ref.Name, Path: paths[i], Pos: e.pos(paths[i], false)})
		}
	}
	add(RelDependsOn, r.DependsOn, e.depPaths)
	add(RelAssociation, r.Associations, e.assocPaths)
	add(RelNotify, r.Notify, e.notifyPaths)
	add(RelSubscribe, r.Subscribe, e.subPaths)
	for _, ref := range deps {
		out.Refs = append(out.Refs, IndexRef{Rel: RelExpression, Name: ref.Name, Path: ref.Path, Pos: e.pos(ref.Path, false)})
	}
	return out
}

// suggester proposes a near existing name for a dangling reference. The
// candidates are sorted once, and only the first few dangling references
// get a suggestion, so a document full of them stays cheap to check.
type suggester struct {
	names []string
	left  int
}

func newSuggester(names []string) *suggester {
	return &suggester{names: slices.Sorted(slices.Values(names)), left: 100}
}

func (s *suggester) near(name string) string {
	if s.left <= 0 {
		return ""
	}
	s.left--
	return suggest.Closest(name, s.names)
}

// checkGraph reports duplicate task ids, references to tasks that do not
// exist, cycles of requires/required_for, bad conditions and parameters
// their task type refuses. Partial graphs skip references and cycles.
func checkGraph(cat *kinds.Catalogue, ge *graphEntry, partial bool, c *collector) {
	byID := make(map[string]*taskEntry, len(ge.tasks))
	for _, e := range ge.tasks {
		if e.t.ID == "" {
			continue
		}
		if first, dup := byID[e.t.ID]; dup {
			c.add(e.pos("id", false), e.path+".id", "duplicate task id %q: first defined at %s", e.t.ID, first.t.Pos)
			continue
		}
		byID[e.t.ID] = e
	}

	if !partial {
		var near *suggester
		g := dag.New()
		for _, e := range ge.tasks {
			if e.t.ID == "" || byID[e.t.ID] != e {
				continue
			}
			g.Add(e.t.ID)
		}
		for _, e := range ge.tasks {
			t := e.t
			if t.ID == "" || byID[t.ID] != e {
				continue
			}
			ref := func(ids []string, field, what string, edge func(other string)) {
				for i, id := range ids {
					if field == "groups" && isRegex(id) {
						continue // every group task it matches, when expanded
					}
					if _, ok := byID[id]; !ok {
						if near == nil {
							ids := make([]string, 0, len(byID))
							for id := range byID {
								ids = append(ids, id)
							}
							near = newSuggester(ids)
						}
						path := nested.Index(field, i)
						msg := fmt.Sprintf("%s %q: no such task in graph %q%s", what, id, ge.g.Type, suggest.Mean(near.near(id)))
						if droppedRelation(field) {
							c.warn(e.pos(path, false), e.path+"."+path, "%s: %s", msg, relationDropped)
						} else {
							c.add(e.pos(path, false), e.path+"."+path, "%s", msg)
						}
						continue
					}
					if edge != nil {
						edge(id)
					}
				}
			}
			ref(t.Requires, "requires", "requires", func(other string) { g.Connect(t.ID, other) })
			ref(t.RequiredFor, "required_for", "required for", func(other string) { g.Connect(other, t.ID) })
			ref(t.Tasks, "tasks", "group member", nil)
			ref(t.Groups, "groups", "group", nil)
			crossRefs(e, ge.g.Type, byID, "cross_depends", t.CrossDepends, c)
			crossRefs(e, ge.g.Type, byID, "cross_depended_by", t.CrossDependedBy, c)
		}
		for _, cycle := range g.Cycles() {
			first := byID[cycle[0]]
			c.add(first.t.Pos, first.path+".requires", "dependency cycle: %s", dag.FormatCycle(cycle))
		}
	}

	// Tasks share a handful of conditions: parse each once.
	conditions := map[string]exprIssue{}
	for _, e := range ge.tasks {
		t := e.t
		if t.Condition != "" {
			is, seen := conditions[t.Condition]
			if !seen {
				is = checkConditionForm(t.Condition)
				conditions[t.Condition] = is
			}
			if is.msg != "" {
				rel := "condition"
				if is.rel != "" {
					rel = nested.Key(rel, is.rel)
				}
				c.add(e.pos(rel, false), e.path+"."+rel, "%s", is.msg)
			}
		}
		yaqlParams := checkTaskYAQL(e, c)
		if partial {
			// A layer may override a few parameters of a task defined in
			// an earlier layer: only the merged task is complete enough
			// for its schema. Expressions can be checked already.
			for _, is := range expr.CheckSpec(t.Parameters) {
				path := nested.Key("parameters", is.Path)
				c.add(e.pos(path, false), e.path+"."+path, "%s", is.Message)
			}
			continue
		}
		if !e.typeKnown {
			continue
		}
		params := t.Parameters
		if params == nil {
			params = map[string]any{}
		}
		if msg := cat.HookWarning(t.Type); msg != "" {
			c.warn(e.pos("parameters", false), e.path+".parameters", "%s", msg)
		}
		for _, se := range cat.ValidateAt(t.Type, "parameters", params) {
			if underAny(se.Path, yaqlParams) {
				continue // an expression: its value is known when the task runs
			}
			c.add(e.pos(se.Path, strings.HasPrefix(se.Message, "unknown field")), e.path+"."+se.Path, "%s", se.Message)
		}
	}
}
