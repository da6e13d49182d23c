package graphs

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// resourceFields are the top-level fields of a resource document.
var resourceFields = []string{"apiVersion", "kind", "metadata", "spec", "dependsOn", "associations", "notify", "subscribe", "target", "meta"}

// resourceEntry is a decoded resource with the document it came from.
type resourceEntry struct {
	r         *model.Resource
	d         *document // nil for resources built in code (ValidatePackage)
	kindKnown bool
	// depPaths and assocPaths locate each reference in the document
	// (associations may come from spec.association(s) or the top level).
	depPaths   []string
	assocPaths []string
	// notifyPaths and subPaths locate each notify and subscribe reference.
	notifyPaths []string
	subPaths    []string
	// idx is the resource's index entry, made when it settled.
	idx IndexEntry
}

// pos is the position of the value at a path inside the resource's
// document, or the resource's own position when it has no document.
func (e *resourceEntry) pos(path string, preferKey bool) model.Position {
	if e.d == nil {
		return e.r.Pos
	}
	return e.d.pos(locate(e.d.root, path, preferKey))
}

// resource decodes a pkger-shaped resource document into its entry (a
// slot already in package order), runs the checks that need only the
// document, and keeps its index entry: the document's tree is no longer
// needed and is dropped.
func (p *parser) resource(d *document, e *resourceEntry) {
	p.decodeResource(d, e)
	checkSpec(p.cat, e, p.c)
	e.idx = indexEntry(p.lookup, e)
	e.d = nil
	e.depPaths, e.assocPaths, e.notifyPaths, e.subPaths = nil, nil, nil, nil
}

// decodeResource decodes a resource document into e.
func (p *parser) decodeResource(d *document, e *resourceEntry) {
	root := d.root
	r := &model.Resource{Pos: d.pos(root)}
	e.r, e.d = r, d
	var kindNode, metaNode *yaml.Node
	fields(root, func(key string, k, v *yaml.Node) {
		switch key {
		case "apiVersion":
			r.APIVersion = p.apiVersion(d, v)
		case "kind":
			kindNode = v
		case "metadata":
			metaNode = v
		case "spec":
			if isNull(v) {
				return
			}
			if spec, ok := p.object(d, v, "spec"); ok {
				r.Spec = spec
				p.specAssociations(d, e, v)
			}
		case "dependsOn":
			r.DependsOn, e.depPaths = p.refs(d, v, "dependsOn", r.DependsOn, e.depPaths)
		case "associations":
			r.Associations, e.assocPaths = p.refs(d, v, "associations", r.Associations, e.assocPaths)
		case "notify":
			r.Notify, e.notifyPaths = p.refs(d, v, "notify", r.Notify, e.notifyPaths)
		case "subscribe", "subscribedTo":
			// subscribedTo is accepted as another spelling of subscribe.
			r.Subscribe, e.subPaths = p.refs(d, v, key, r.Subscribe, e.subPaths)
		case "target":
			r.Target = p.target(d, v)
		case "meta":
			r.Meta = p.meta(d, v, "meta")
		default:
			p.unknownField(d, k, "", key, resourceFields)
		}
	})
	if r.APIVersion == "" {
		r.APIVersion = model.APIVersion
	}
	switch {
	case kindNode == nil:
		p.c.add(d.pos(root), "kind", "missing kind")
	default:
		if kind, ok := p.str(d, kindNode, "kind"); ok {
			r.Kind = kind
			if kind == "" {
				p.c.add(d.pos(kindNode), "kind", "missing kind")
			} else if k, found := p.lookup(resourceKind(kind)); found {
				e.kindKnown = true
				r.Kind = p.kindName(resourceKind(kind), k)
			} else {
				p.c.add(d.pos(kindNode), "kind", "%s", unknownKind(p.cat, kind))
			}
		}
	}
	r.Name = p.metadataName(d, root, metaNode)
}

// ready reports whether a resource document can be decoded now: its kind,
// and every kind its references name, are known (or are no kind at all).
// Otherwise a `kind: Kind` document further on may define them, and the
// resource waits for the end of the sources, as every document once did.
func (p *parser) ready(root *yaml.Node) bool {
	known := func(kind string) bool {
		_, ok := p.lookup(kind)
		return ok || kind == ""
	}
	if k := mapGet(root, "kind"); k != nil && k.Kind == yaml.ScalarNode && !known(k.Value) {
		return false
	}
	lists := []*yaml.Node{mapGet(root, "dependsOn"), mapGet(root, "associations"), mapGet(root, "notify"),
		mapGet(root, "subscribe"), mapGet(root, "subscribedTo")}
	if spec := mapGet(root, "spec"); spec != nil {
		lists = append(lists, mapGet(spec, "associations"), mapGet(spec, "association"))
	}
	for _, l := range lists {
		if l == nil || l.Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range l.Content {
			switch item.Kind {
			case yaml.ScalarNode:
				if ref, ok := model.ParseRef(item.Value); ok && !known(ref.Kind) {
					return false
				}
			case yaml.MappingNode:
				if k := mapGet(item, "kind"); k != nil && k.Kind == yaml.ScalarNode && !known(k.Value) {
					return false
				}
			}
		}
	}
	return true
}

// kindName is the catalogue spelling of a kind; a Fuel task type used as
// a kind keeps its own (lower-case) name, since its parameters differ
// from its base kind's spec.
func (p *parser) kindName(written string, k *kinds.Kind) string {
	if p.cat.IsTaskType(written) {
		return strings.ToLower(written)
	}
	return k.Name
}

// resourceKind is the kind a resource document means by written: Puppet's
// and mgmt's `group` is the account group (unix_group), as a Puppet user
// writes it. Fuel's group kind orders a graph's member tasks (a task's
// `type: group`) and has no meaning among a package's resources, where it
// would silently change nothing.
func resourceKind(written string) string {
	if strings.EqualFold(written, kinds.KindGroup) {
		return kinds.KindUnixGroup
	}
	return written
}

func unknownKind(cat *kinds.Catalogue, kind string) string {
	return fmt.Sprintf("unknown kind %q%s", kind, suggest.Mean(cat.Suggest(kind)))
}

// metadataName reads metadata.name, the resource's identity.
func (p *parser) metadataName(d *document, root, meta *yaml.Node) string {
	if meta == nil {
		p.c.add(d.pos(root), "metadata.name", "missing metadata.name")
		return ""
	}
	if meta.Kind != yaml.MappingNode {
		p.c.add(d.pos(meta), "metadata", "expected an object with a name, got %s", describe(meta))
		return ""
	}
	var name string
	var nameNode *yaml.Node
	fields(meta, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			nameNode = v
			name, _ = p.text(d, v, "metadata.name")
		default:
			p.unknownField(d, k, "metadata", key, []string{"name"})
		}
	})
	switch {
	case nameNode == nil:
		p.c.add(d.pos(meta), "metadata.name", "missing metadata.name")
	case name == "" && !isNull(nameNode) && nameNode.Kind == yaml.ScalarNode:
		p.c.add(d.pos(nameNode), "metadata.name", "missing metadata.name")
	case strings.Contains(name, "@"):
		p.c.add(d.pos(nameNode), "metadata.name", "name %q may not contain '@' (it separates resources from nodes)", name)
	}
	return name
}

// specAssociations moves pkger's spec.associations and spec.association
// out of the spec into the resource's associations.
func (p *parser) specAssociations(d *document, e *resourceEntry, spec *yaml.Node) {
	for _, key := range []string{"associations", "association"} {
		v := mapGet(spec, key)
		if v == nil {
			continue
		}
		delete(e.r.Spec, key)
		e.r.Associations, e.assocPaths = p.refs(d, v, "spec."+key, e.r.Associations, e.assocPaths)
	}
}

// refs reads a list of references: "Kind/name" strings or {kind, name}
// objects. Kinds take their catalogue spelling.
func (p *parser) refs(d *document, n *yaml.Node, path string, refs []model.Ref, paths []string) ([]model.Ref, []string) {
	if isNull(n) {
		return refs, paths
	}
	if n.Kind != yaml.SequenceNode {
		p.c.add(d.pos(n), path, "expected a list of references (\"Kind/name\" or {kind, name}), got %s", describe(n))
		return refs, paths
	}
	for i, item := range n.Content {
		ip := nested.Index(path, i)
		var ref model.Ref
		switch item.Kind {
		case yaml.ScalarNode:
			s, ok := p.str(d, item, ip)
			if !ok {
				continue
			}
			r, ok := model.ParseRef(s)
			if !ok {
				p.c.add(d.pos(item), ip, "invalid reference %q: want \"Kind/name\"", s)
				continue
			}
			ref = r
		case yaml.MappingNode:
			fields(item, func(key string, k, v *yaml.Node) {
				switch key {
				case "kind":
					ref.Kind, _ = p.str(d, v, nested.Key(ip, key))
				case "name":
					ref.Name, _ = p.text(d, v, nested.Key(ip, key))
				default:
					p.unknownField(d, k, ip, key, []string{"kind", "name"})
				}
			})
			if ref.Kind == "" || ref.Name == "" {
				p.c.add(d.pos(item), ip, "a reference needs both kind and name")
				continue
			}
		default:
			p.c.add(d.pos(item), ip, "expected a reference (\"Kind/name\" or {kind, name}), got %s", describe(item))
			continue
		}
		if k, ok := p.lookup(resourceKind(ref.Kind)); ok {
			ref.Kind = p.kindName(resourceKind(ref.Kind), k)
		}
		refs = append(refs, ref)
		paths = append(paths, ip)
	}
	return refs, paths
}

// target reads {roles, nodes}.
func (p *parser) target(d *document, n *yaml.Node) *model.Target {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.c.add(d.pos(n), "target", "expected an object {roles, nodes}, got %s", describe(n))
		return nil
	}
	t := &model.Target{}
	fields(n, func(key string, k, v *yaml.Node) {
		switch key {
		case "roles":
			t.Roles, _ = p.strList(d, v, "target.roles", true)
			p.checkPatterns(d, v, "target.roles", t.Roles)
		case "nodes":
			t.Nodes, _ = p.strList(d, v, "target.nodes", true)
		default:
			p.unknownField(d, k, "target", key, []string{"roles", "nodes"})
		}
	})
	return t
}

var metaFields = []string{"retry", "delay", "timeout", "noop", "idempotent"}

// meta reads execution settings {retry, delay, timeout, noop, idempotent}. Durations
// are Go duration strings or seconds; they are stored as duration strings.
func (p *parser) meta(d *document, n *yaml.Node, path string) model.Meta {
	var m model.Meta
	if isNull(n) {
		return m
	}
	if n.Kind != yaml.MappingNode {
		p.c.add(d.pos(n), path, "expected an object {retry, delay, timeout, noop, idempotent}, got %s", describe(n))
		return m
	}
	fields(n, func(key string, k, v *yaml.Node) {
		fp := nested.Key(path, key)
		switch key {
		case "retry":
			if i, ok := p.integer(d, v, fp); ok {
				if i < -1 {
					p.c.add(d.pos(v), fp, "retry must be -1 (forever), 0 or more, got %d", i)
				}
				m.Retry = i
			}
		case "delay":
			m.Delay = p.duration(d, v, fp)
		case "timeout":
			m.Timeout = p.duration(d, v, fp)
		case "noop":
			m.Noop, _ = p.boolean(d, v, fp)
		case "idempotent":
			m.Idempotent, _ = p.boolean(d, v, fp)
		default:
			p.unknownField(d, k, path, key, metaFields)
		}
	})
	return m
}

// duration reads a duration ("90s", "1m30s") or a number of seconds.
func (p *parser) duration(d *document, n *yaml.Node, path string) string {
	if isNull(n) || n.Kind != yaml.ScalarNode {
		p.c.add(d.pos(n), path, "expected a duration such as \"30s\" or a number of seconds, got %s", describe(n))
		return ""
	}
	v, err := scalarValue(n)
	if err == nil {
		if f, ok := v.(float64); ok && (f > math.MaxInt64/float64(time.Second) || f < 0) {
			err = errOutOfRange
		}
		if i, ok := v.(int64); ok && (i > math.MaxInt64/int64(time.Second) || i < 0) {
			err = errOutOfRange
		}
	}
	var dur time.Duration
	if err == nil {
		dur, err = kinds.ParseTimeout(v)
	}
	if err != nil {
		p.c.add(d.pos(n), path, "invalid duration %q: want a duration such as \"30s\" or a number of seconds", n.Value)
		return ""
	}
	return dur.String()
}
