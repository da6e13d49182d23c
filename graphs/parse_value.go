package graphs

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
	"gopkg.in/yaml.v3"
)

// describe names the type of a node for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case nullTag:
			return "null"
		case boolTag:
			return "a boolean"
		case intTag, floatTag:
			return "a number"
		}
		return "a string"
	}
	return "an unknown value"
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == nullTag
}

// value converts a node into the JSON data model: map[string]any, []any,
// string, int64 or float64, bool and nil. Problems (a key that is not a
// scalar, a number JSON cannot hold) are reported at the node.
func (p *parser) value(d *document, n *yaml.Node, path string) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				p.c.add(d.pos(k), path, "keys must be strings, not %s", describe(k))
				continue
			}
			// Leaves are converted in place: their path is only built
			// for an error.
			if v.Kind == yaml.ScalarNode {
				m[k.Value] = p.scalar(d, v, path, k.Value, -1)
				continue
			}
			m[k.Value] = p.value(d, v, nested.Key(path, k.Value))
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, item := range n.Content {
			if item.Kind == yaml.ScalarNode {
				l[i] = p.scalar(d, item, path, "", i)
				continue
			}
			l[i] = p.value(d, item, nested.Index(path, i))
		}
		return l
	case yaml.ScalarNode:
		return p.scalar(d, n, path, "", -2)
	}
	p.c.add(d.pos(n), path, "unsupported value")
	return nil
}

// scalar converts a scalar whose path is parent plus key (index < 0) or
// parent plus [index]; index -2 means the path is parent itself.
func (p *parser) scalar(d *document, n *yaml.Node, parent, key string, index int) any {
	if n.Tag == strTag {
		return n.Value // the common case, without resolving the tag
	}
	v, err := scalarValue(n)
	if err != nil {
		path := parent
		switch {
		case index >= 0:
			path = nested.Index(parent, index)
		case index == -1:
			path = nested.Key(parent, key)
		}
		p.c.add(d.pos(n), path, "%v", err)
	}
	return v
}

// scalarValue resolves a scalar by its tag. Numbers become int64 when they
// are whole and fit, else float64; YAML's infinities and NaN have no JSON
// form and are refused. Timestamps and other tags stay strings.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case nullTag:
		return nil, nil
	case boolTag:
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return n.Value, fmt.Errorf("invalid boolean %q", n.Value)
		}
		return b, nil
	case intTag:
		s := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			return float64(u), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
			return f, nil
		}
		return n.Value, fmt.Errorf("number %s is out of range", n.Value)
	case floatTag:
		s := strings.ReplaceAll(n.Value, "_", "")
		switch strings.ToLower(strings.TrimLeft(s, "+-")) {
		case ".inf", ".nan":
			return n.Value, fmt.Errorf("%s is not a finite number (JSON cannot hold it)", n.Value)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return n.Value, fmt.Errorf("number %s is out of range", n.Value)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 && !strings.ContainsAny(s, ".eE") {
			return int64(f), nil
		}
		return f, nil
	}
	return n.Value, nil
}

// str reads a string field.
func (p *parser) str(d *document, n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == strTag {
		return n.Value, true
	}
	p.c.add(d.pos(n), path, "expected a string, got %s", describe(n))
	return "", false
}

// text reads a name or id: a string, or a number or boolean written
// without quotes, taken as written.
func (p *parser) text(d *document, n *yaml.Node, path string) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() != nullTag {
		return n.Value, true
	}
	p.c.add(d.pos(n), path, "expected a string, got %s", describe(n))
	return "", false
}

// strList reads a list of strings; with single, one string stands for a
// list of one.
func (p *parser) strList(d *document, n *yaml.Node, path string, single bool) ([]string, bool) {
	if single && n.Kind == yaml.ScalarNode && n.ShortTag() == strTag {
		return []string{n.Value}, true
	}
	if n.Kind != yaml.SequenceNode {
		if single {
			p.c.add(d.pos(n), path, "expected a string or a list of strings, got %s", describe(n))
		} else {
			p.c.add(d.pos(n), path, "expected a list of strings, got %s", describe(n))
		}
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, item := range n.Content {
		if item.Kind == yaml.ScalarNode && item.ShortTag() == strTag {
			out = append(out, item.Value)
			continue
		}
		p.str(d, item, nested.Index(path, i)) // reports it
		ok = false
	}
	return out, ok
}

func (p *parser) boolean(d *document, n *yaml.Node, path string) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == boolTag {
		if b, err := strconv.ParseBool(n.Value); err == nil {
			return b, true
		}
	}
	p.c.add(d.pos(n), path, "expected true or false, got %s", describe(n))
	return false, false
}

func (p *parser) integer(d *document, n *yaml.Node, path string) (int, bool) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == intTag || n.ShortTag() == floatTag) {
		if v, err := scalarValue(n); err == nil {
			if i, ok := v.(int64); ok && i >= math.MinInt32 && i <= math.MaxInt32 {
				return int(i), true
			}
		}
	}
	p.c.add(d.pos(n), path, "expected a whole number, got %s", describeValue(n))
	return 0, false
}

// describeValue is describe with the literal of a scalar.
func describeValue(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.ShortTag() != nullTag {
		return fmt.Sprintf("%s (%s)", describe(n), n.Value)
	}
	return describe(n)
}

// object reads a mapping as a JSON object.
func (p *parser) object(d *document, n *yaml.Node, path string) (map[string]any, bool) {
	if n.Kind != yaml.MappingNode {
		p.c.add(d.pos(n), path, "expected an object, got %s", describe(n))
		return nil, false
	}
	return p.value(d, n, path).(map[string]any), true
}

// fields iterates a mapping's scalar keys in document order.
func fields(n *yaml.Node, fn func(key string, k, v *yaml.Node)) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i].Value, n.Content[i], n.Content[i+1])
	}
}

// locate finds the node a path names inside root, for an error's
// position. Keys may contain dots: the longest key that matches wins. With
// preferKey the key of the last step is returned rather than its value
// (for unknown fields); so is the key of an object or a list. A path that goes past the document (a missing
// required field) yields its deepest existing parent, by its key when it
// has one.
func locate(root *yaml.Node, path string, preferKey bool) *yaml.Node {
	var key *yaml.Node
	val := root
	rest := path
	for rest != "" {
		switch {
		case rest[0] == '.':
			rest = rest[1:]
			continue
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 || (val.Kind != yaml.SequenceNode && val.Kind != yaml.ScalarNode) {
				return parentNode(key, val)
			}
			i, err := strconv.Atoi(rest[1:end])
			if i == 0 && err == nil && val.Kind == yaml.ScalarNode && end+1 == len(rest) {
				return val // a single value standing for a list of one
			}
			if err != nil || i < 0 || i >= len(val.Content) {
				return parentNode(key, val)
			}
			key, val = nil, val.Content[i]
			rest = rest[end+1:]
		default:
			if val.Kind != yaml.MappingNode {
				return parentNode(key, val)
			}
			var bestK, bestV *yaml.Node
			for i := 0; i+1 < len(val.Content); i += 2 {
				k := val.Content[i].Value
				if strings.HasPrefix(rest, k) && (len(rest) == len(k) || rest[len(k)] == '.' || rest[len(k)] == '[') {
					if bestK == nil || len(k) > len(bestK.Value) {
						bestK, bestV = val.Content[i], val.Content[i+1]
					}
				}
			}
			if bestK == nil {
				return parentNode(key, val)
			}
			key, val = bestK, bestV
			rest = rest[len(bestK.Value):]
		}
	}
	// An object or list is pointed at by its key: its own position is that
	// of its first entry, which may be lines further down.
	if key != nil && (preferKey || val.Kind == yaml.MappingNode || val.Kind == yaml.SequenceNode) {
		return key
	}
	return val
}

func parentNode(key, val *yaml.Node) *yaml.Node {
	if key != nil {
		return key
	}
	return val
}
