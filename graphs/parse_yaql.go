package graphs

import (
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/yaql"
)

// condition reads a task's condition: a string (Cairn's template condition
// or Fuel's legacy syntax, told apart by form when the graph is validated)
// or Fuel's {yaql_exp: "…"}, kept tagged (yaql.Tagged).
func (p *parser) condition(d *document, n *yaml.Node, path string) string {
	if n.Kind == yaml.MappingNode {
		src, ok := p.yaqlExp(d, n, path)
		if !ok {
			return ""
		}
		return yaql.Tagged(src)
	}
	s, _ := p.str(d, n, path)
	return s
}

// yaqlExp reads {yaql_exp: "…"}.
func (p *parser) yaqlExp(d *document, n *yaml.Node, path string) (string, bool) {
	src, found, ok := "", false, true
	fields(n, func(key string, k, v *yaml.Node) {
		switch key {
		case "yaql_exp":
			found = true
			src, ok = p.str(d, v, nested.Key(path, key))
		default:
			p.unknownField(d, k, path, key, []string{"yaql_exp"})
			ok = false
		}
	})
	if !found {
		p.c.add(d.pos(n), path, "missing yaql_exp: write a string or {yaql_exp: \"…\"}")
		return "", false
	}
	return src, ok
}
