// Package graphs reads Cairn's documents — packages of resources (pkger
// shape) and typed graphs of tasks (Fuel shape), in YAML, JSON or Jsonnet —
// into one model, validates them with every error at once, merges graph
// layers, and builds and sorts the DAG of steps.
package graphs

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// Options steer reading and validation. The zero value reads with the
// built-in catalogue and the default limits.
type Options struct {
	// Catalogue knows the kinds and task types; nil means kinds.Builtin().
	// It is never modified: `kind: Kind` documents are added to a clone.
	Catalogue *kinds.Catalogue
	// ExtVars are Jsonnet external variables (std.extVar).
	ExtVars map[string]string
	// ImportDir allows Jsonnet imports, resolved inside this directory
	// only. Empty refuses every import: documents are self-contained.
	ImportDir string
	// MaxBytes bounds each source and each Jsonnet output (default 10 MiB);
	// MaxTotalBytes all sources and imports together (default 32 MiB).
	MaxBytes      int64
	MaxTotalBytes int64
	// MaxNodes bounds the values of one document after alias expansion
	// (default 500,000); MaxDepth their nesting (default 100).
	MaxNodes int
	MaxDepth int
	// Timeout bounds each Jsonnet evaluation (default 10 s);
	// JsonnetMaxStack its call depth (default 500).
	Timeout         time.Duration
	JsonnetMaxStack int
	// Jsonnet evaluates Jsonnet sources; nil evaluates in this process
	// (see InProcessJsonnet and JsonnetProcess).
	Jsonnet JsonnetEvaluator
	// Partial reads graph layers that are merged later: tasks may leave
	// out their type (overriding only some fields of a task of an earlier
	// layer), and references and cycles are not checked because they may
	// involve tasks of other layers. Validate the merged graph with
	// ValidateGraph.
	Partial bool
	// Part reads sources that are one part of a package whose other parts
	// are read elsewhere (an upload): each resource is checked on its own,
	// and what spans the package (duplicates, references, cycles) is left
	// to CheckIndex over the index entries of every part
	// (Documents.Index).
	Part bool
	// Warn, when set, is called with each warning: a problem Cairn accepts
	// as Fuel did (a duplicate YAML key, whose last value is used).
	Warn func(Error)
}

// Documents is what a set of sources holds.
type Documents struct {
	// Package holds the resources of all sources.
	Package *model.Package
	// Graphs holds one graph per type, tasks of all sources together, in
	// the order the types first appear.
	Graphs []*model.Graph
	// Catalogue is the catalogue to use from here on: Options.Catalogue
	// (or the built-in one) plus the kinds the documents defined.
	Catalogue *kinds.Catalogue
	// Kinds are the kinds the documents defined (`kind: Kind`).
	Kinds []kinds.Kind
	// Warnings are the problems accepted as Fuel accepted them (duplicate
	// YAML keys), sorted like errors.
	Warnings Errors
	// Index holds the index entry of each resource, in package order: what
	// CheckIndex needs of it.
	Index []IndexEntry
	// Deployster reports that a document was a Deployster manifest
	// (resources: {NAME: {type, config, dependencies}}), whose readers
	// also read Deployster's auto-variables files.
	Deployster bool
}

// Parse reads and validates sources that together make one package
// (uniqueness holds across all of them) and any graphs they contain. When
// anything is wrong the error is Errors, with every problem found, and
// Documents still holds what could be read.
//
// Resource documents are read one at a time: each is decoded, checked on
// its own and reduced to its resource and index entry before the next is
// read, so the memory a parse holds grows with the resources, not with
// the documents' trees (a resource of a kind a later document defines
// waits for it, tree and all). The limits on values and nesting hold per
// document; MaxBytes per source and MaxTotalBytes for them all.
func Parse(opts Options, sources ...Source) (*Documents, error) {
	p := newParser(opts)
	r := &reader{opts: opts, lim: opts.limits(), c: p.c}
	for _, src := range sources {
		name := src.Name
		if name == "" {
			name = "<input>"
		}
		p.pkg.Sources = append(p.pkg.Sources, name)
		r.read(src, p.document)
	}
	p.finish()
	p.validate()
	out := p.result()
	out.Warnings = p.warnings()
	return out, p.c.errs.Sort().Err()
}

// warnings sorts the warnings and hands each to Options.Warn.
func (p *parser) warnings() Errors {
	ws := p.c.warns.Sort()
	if p.opts.Warn != nil {
		for _, w := range ws {
			p.opts.Warn(w)
		}
	}
	return ws
}

// ParseGraph reads a source holding exactly one graph: a `kind: Graph`
// document, a Fuel graph object {type, name, tasks}, or a bare list of
// tasks (type "default"). An empty source is an empty graph.
func ParseGraph(opts Options, src Source) (*model.Graph, error) {
	if src.Name == "" {
		src.Name = "<input>"
	}
	p := newParser(opts)
	r := &reader{opts: opts, lim: opts.limits(), c: p.c}
	r.read(src, p.document)
	p.finish()
	for _, e := range p.resources {
		p.c.add(e.r.Pos, "", "expected a graph, found a %s resource", e.r.Kind)
	}
	for _, k := range p.kindDocs {
		p.c.add(k.pos(k.root), "", "expected a graph, found a kind definition")
	}
	var g *model.Graph
	switch len(p.graphs) {
	case 0:
		g = &model.Graph{Type: model.DefaultGraphType}
	case 1:
		g = p.graphs[0].g
	default:
		types := make([]string, len(p.graphs))
		for i, ge := range p.graphs {
			types[i] = ge.g.Type
		}
		p.c.add(model.Position{Source: src.Name}, "", "expected one graph, found %d (types %s)", len(p.graphs), strings.Join(types, ", "))
		g = p.graphs[0].g
	}
	p.validate()
	p.warnings()
	return g, p.c.errs.Sort().Err()
}

// parser turns documents into the model and validates it.
type parser struct {
	opts      Options
	cat       *kinds.Catalogue
	cloned    bool
	c         *collector
	pkg       *model.Package
	resources []*resourceEntry
	// waiting are the documents read but not yet decoded (see document).
	waiting  []waiting
	graphs   []*graphEntry
	kindDocs []*document
	kinds    []kinds.Kind
	patterns map[string]error // compiled "/regex/" patterns
	types    map[string]bool  // task types the catalogue knows
	// memo remembers the lookups of cat (renewed when cat changes).
	memo *kindMemo
	// deployster: a document was a Deployster manifest.
	deployster bool
}

func newParser(opts Options) *parser {
	cat := opts.Catalogue
	if cat == nil {
		cat = kinds.Builtin()
	}
	return &parser{opts: opts, cat: cat, c: &collector{}, pkg: &model.Package{}}
}

func (p *parser) result() *Documents {
	out := &Documents{Package: p.pkg, Catalogue: p.cat, Kinds: p.kinds, Index: p.index(), Deployster: p.deployster}
	p.pkg.Resources = make([]*model.Resource, 0, len(p.resources))
	for _, e := range p.resources {
		p.pkg.Resources = append(p.pkg.Resources, e.r)
	}
	for _, g := range p.graphs {
		out.Graphs = append(out.Graphs, g.g)
	}
	return out
}

// Document shapes.
const (
	shapeResource = iota
	shapeGraph
	shapeKind
	shapeTaskList
	shapeFuelGraph
	shapeInvalid
)

func shapeOf(root *yaml.Node) int {
	switch root.Kind {
	case yaml.SequenceNode:
		return shapeTaskList
	case yaml.MappingNode:
	default:
		return shapeInvalid
	}
	kind := mapGet(root, "kind")
	if kind == nil && mapGet(root, "apiVersion") == nil && mapGet(root, "metadata") == nil && mapGet(root, "tasks") != nil {
		return shapeFuelGraph
	}
	if kind != nil && kind.Kind == yaml.ScalarNode {
		switch {
		case strings.EqualFold(kind.Value, kinds.DefinitionKind):
			return shapeKind
		case strings.EqualFold(kind.Value, graphKind):
			return shapeGraph
		}
	}
	return shapeResource
}

// graphKind is the `kind` of a graph document.
const graphKind = "Graph"

// waiting is a document read but not decoded yet: a graph, or a resource
// (with its slot in package order) of a kind not known yet.
type waiting struct {
	d *document
	e *resourceEntry
}

// document takes one document as it is read: a kind definition joins the
// catalogue at once, a resource whose kinds are known is decoded at once
// (its tree then dropped), and anything else waits for finish, so that a
// package may use a kind it defines in any of its documents.
func (p *parser) document(d *document) {
	if isDeploysterManifest(d.root) {
		p.deploysterManifest(d)
		return
	}
	switch shapeOf(d.root) {
	case shapeKind:
		p.kindDefinition(d)
	case shapeResource:
		e := &resourceEntry{}
		p.resources = append(p.resources, e)
		if p.ready(d.root) {
			p.resource(d, e)
			return
		}
		p.waiting = append(p.waiting, waiting{d: d, e: e})
	default:
		p.waiting = append(p.waiting, waiting{d: d})
	}
}

// finish decodes the documents that waited, in their order, now that
// every kind definition has been read.
func (p *parser) finish() {
	for _, w := range p.waiting {
		d := w.d
		if w.e != nil {
			p.resource(d, w.e)
			continue
		}
		switch shapeOf(d.root) {
		case shapeGraph:
			p.graphDocument(d)
		case shapeFuelGraph:
			p.fuelGraph(d)
		case shapeTaskList:
			p.taskList(d, p.graph(model.DefaultGraphType, "", d.pos(d.root)), d.root, "")
		case shapeInvalid:
			p.c.add(d.pos(d.root), "", "expected a document (an object) or a list of tasks, got %s", describe(d.root))
		}
	}
	p.waiting = nil
}

// index is every resource's index entry, in package order.
func (p *parser) index() []IndexEntry {
	out := make([]IndexEntry, len(p.resources))
	for i, e := range p.resources {
		out[i] = e.idx
	}
	return out
}

// kindDefinition registers a `kind: Kind` document into a clone of the
// catalogue, so the rest of the package can use the kind.
func (p *parser) kindDefinition(d *document) {
	doc, _ := p.value(d, d.root, "").(map[string]any)
	p.kindDocs = append(p.kindDocs, d)
	k, err := kinds.ParseKindDefinition(doc)
	if err != nil {
		p.definitionErrors(d, err)
		return
	}
	if strings.EqualFold(k.Name, graphKind) || strings.EqualFold(k.Name, kinds.DefinitionKind) {
		p.c.add(d.pos(locate(d.root, "metadata.name", false)), "metadata.name", "%q is reserved for %s documents", k.Name, k.Name)
		return
	}
	if !p.cloned {
		p.cat = p.cat.Clone()
		p.cloned = true
	}
	if err := p.cat.Add(k); err != nil {
		p.c.add(d.pos(locate(d.root, "metadata.name", false)), "metadata.name", "%v", err)
		return
	}
	p.kinds = append(p.kinds, k)
	p.memo = nil
}

// lookup is p.cat.Lookup, remembered until the catalogue changes.
func (p *parser) lookup(name string) (*kinds.Kind, bool) {
	if p.memo == nil {
		p.memo = newKindMemo(p.cat)
	}
	return p.memo.lookup(name)
}

// definitionErrors maps the "path: message" errors of a kind definition
// onto the document's nodes.
func (p *parser) definitionErrors(d *document, err error) {
	var list []error
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range x.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			if inner := x.Unwrap(); inner != nil {
				walk(inner)
				return
			}
			list = append(list, e)
		default:
			list = append(list, e)
		}
	}
	walk(err)
	for _, e := range list {
		msg := e.Error()
		path, rest, ok := strings.Cut(msg, ": ")
		if !ok || strings.ContainsAny(path, " \"") {
			p.c.add(d.pos(d.root), "", "%s", msg)
			continue
		}
		preferKey := strings.HasPrefix(rest, "unknown field")
		p.c.add(d.pos(locate(d.root, path, preferKey)), path, "%s", rest)
	}
}

// unknownField reports a field the document shape does not have, with the
// nearest known field as a suggestion.
func (p *parser) unknownField(d *document, k *yaml.Node, path, key string, known []string) {
	p.c.add(d.pos(k), nested.Key(path, key), "unknown field %q%s", key, suggest.Hint(key, known))
}

// apiVersion checks the optional apiVersion field.
func (p *parser) apiVersion(d *document, n *yaml.Node) string {
	s, ok := p.str(d, n, "apiVersion")
	if ok && s != model.APIVersion {
		p.c.add(d.pos(n), "apiVersion", "unsupported apiVersion %q (want %q)", s, model.APIVersion)
	}
	return s
}
