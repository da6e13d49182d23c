package graphs

import (
	"bytes"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
)

// A Deployster manifest is a document {resources: {NAME: {type, config,
// dependencies, readonly}}, plugs: {...}} with no kind. It is read as
// Deployster reads it: each resource is an `external` resource named NAME
// whose image is its type (Deployster runs `docker run TYPE`), its config
// and dependencies as written; readonly (Deployster resolves such a
// resource and never applies it) is meta.noop. Expressions in a config are
// Deployster's: a bare name is a dependency alias ({{ disk.state.zone }})
// or else a context variable ({{ region }}); they are read as Cairn's
// {{ deps.disk.state.zone }} and {{ vars.region }} (DeploysterExpr).

// deploysterResourceFields are the fields of a Deployster resource.
var deploysterResourceFields = []string{"type", "config", "dependencies", "readonly"}

// isDeploysterManifest reports whether a document is a Deployster
// manifest: an object with resources (and perhaps plugs) and nothing else.
func isDeploysterManifest(root *yaml.Node) bool {
	if root.Kind != yaml.MappingNode || mapGet(root, "resources") == nil {
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "resources", "plugs":
		default:
			return false
		}
	}
	return true
}

// deploysterManifest reads each resource of a Deployster manifest as a
// document of its own, positioned where the manifest writes it.
func (p *parser) deploysterManifest(d *document) {
	p.deployster = true
	fields(d.root, func(key string, k, v *yaml.Node) {
		switch key {
		case "plugs":
			if !isNull(v) {
				p.c.warn(d.pos(k), "plugs", "a manifest's plugs are not read: Cairn's plugs are the directories of CAIRN_PLUGS_DIR on the server, one per plug name")
			}
		case "resources":
			if v.Kind != yaml.MappingNode {
				p.c.add(d.pos(v), "resources", "expected an object of resources by name, got %s", describe(v))
				return
			}
			fields(v, func(name string, rk, rv *yaml.Node) {
				if root := p.deploysterResource(d, name, rk, rv); root != nil {
					p.document(&document{source: d.source, index: d.index, root: root, format: d.format})
				}
			})
		}
	})
}

// deploysterResource is the `external` resource document of one Deployster
// resource, or nil when it is not an object.
func (p *parser) deploysterResource(d *document, name string, k, v *yaml.Node) *yaml.Node {
	path := nested.Key("resources", name)
	if v.Kind != yaml.MappingNode {
		p.c.add(d.pos(v), path, "expected a resource {type, config, dependencies}, got %s", describe(v))
		return nil
	}
	at := func(n *yaml.Node) (int, int) { return n.Line, n.Column }
	scalar := func(s string, n *yaml.Node) *yaml.Node {
		line, col := at(n)
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Line: line, Column: col}
	}
	mapping := func(n *yaml.Node, kv ...*yaml.Node) *yaml.Node {
		line, col := at(n)
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv, Line: line, Column: col}
	}
	var spec []*yaml.Node
	var meta *yaml.Node
	aliases := map[string]bool{}
	if deps := mapGet(v, "dependencies"); deps != nil && deps.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(deps.Content); i += 2 {
			aliases[deps.Content[i].Value] = true
		}
	}
	typed := false
	fields(v, func(key string, fk, fv *yaml.Node) {
		switch key {
		case "type":
			typed = true
			spec = append(spec, scalar("image", fk), fv)
		case "config":
			spec = append(spec, scalar("config", fk), deploysterExprs(fv, aliases))
		case "dependencies":
			spec = append(spec, scalar("dependencies", fk), fv)
		case "readonly":
			meta = mapping(fk, scalar("noop", fk), fv)
		default:
			p.unknownField(d, fk, path, key, deploysterResourceFields)
		}
	})
	if !typed {
		p.c.add(d.pos(k), nested.Key(path, "type"), "missing type (the resource's Docker image)")
		return nil
	}
	root := mapping(k,
		scalar("kind", k), scalar(externalKind, k),
		scalar("metadata", k), mapping(k, scalar("name", k), scalar(name, k)),
		scalar("spec", v), mapping(v, spec...),
	)
	if meta != nil {
		root.Content = append(root.Content, scalar("meta", v), meta)
	}
	return root
}

// externalKind is the kind a Deployster resource is read as.
const externalKind = "external"

// deploysterExprs rewrites, in place, the expressions of every string
// under n (DeploysterExpr) and returns n.
func deploysterExprs(n *yaml.Node, aliases map[string]bool) *yaml.Node {
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "{{") {
			n.Value = DeploysterExpr(n.Value, aliases)
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			deploysterExprs(n.Content[i], aliases)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			deploysterExprs(c, aliases)
		}
	}
	return n
}

// jinjaWords are the words of Jinja2's expressions that are not names.
var jinjaWords = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true,
	"true": true, "false": true, "none": true, "True": true, "False": true, "None": true,
}

// DeploysterExpr reads the {{ … }} expressions of a Deployster template as
// Cairn's: a bare name that starts a path is a dependency alias (one of
// aliases: deps.NAME) or a context variable (vars.NAME). Names already
// spelled as Cairn's (deps, vars, node, a leading dot), names called as
// functions, Jinja's keywords, string literals and text outside the
// braces are left as written. Cost: one pass over s.
func DeploysterExpr(s string, aliases map[string]bool) string {
	var b strings.Builder
	for {
		open := strings.Index(s, "{{")
		if open < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := strings.Index(s[open+2:], "}}")
		if end < 0 {
			b.WriteString(s)
			return b.String()
		}
		end += open + 2
		b.WriteString(s[:open+2])
		b.WriteString(deploysterAction(s[open+2:end], aliases))
		b.WriteString("}}")
		s = s[end+2:]
	}
}

// deploysterAction rewrites the names of one action's text.
func deploysterAction(a string, aliases map[string]bool) string {
	var b strings.Builder
	for i := 0; i < len(a); {
		c := a[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(a) && a[j] != c {
				if a[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(a))
			b.WriteString(a[i:j])
			i = j
		case isIdentStart(c):
			j := i
			for j < len(a) && isIdentChar(a[j]) {
				j++
			}
			word := a[i:j]
			prev := byte(' ')
			if i > 0 {
				prev = a[i-1]
			}
			next := strings.TrimLeft(a[j:], " \t")
			switch {
			case prev == '.' || prev == '$' || isIdentChar(prev):
			case jinjaWords[word], strings.HasPrefix(next, "("):
			case word == "deps" || word == "vars" || word == "node":
			case aliases[word]:
				b.WriteString("deps.")
			default:
				b.WriteString("vars.")
			}
			b.WriteString(word)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// HasDeploysterManifest reports whether YAML or JSON data holds a
// Deployster manifest among its documents. Cost: one YAML decode of data.
func HasDeploysterManifest(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return false
		}
		if len(n.Content) > 0 && isDeploysterManifest(n.Content[0]) {
			return true
		}
	}
}
