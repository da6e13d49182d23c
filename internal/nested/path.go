package nested

import (
	"strconv"
	"strings"
)

// Path is where a value sits in a document: a root name, then the map keys
// and list indexes that lead to it. String renders it dotted with indexes in
// brackets ("spec.config.items[2]"). A walk hands its visitor a Path that
// shares storage with the walk: it is valid during the call only, so keep
// p.String(), not p. Rendering costs one allocation; a walk that never
// renders a path builds none.
type Path struct {
	root  string
	steps []step
}

// step is one map key (index < 0) or one list index.
type step struct {
	key   string
	index int
}

// Root is the path of a document's root named root ("" for none).
func Root(root string) Path { return Path{root: root} }

// Depth is the number of keys and indexes below the root.
func (p Path) Depth() int { return len(p.steps) }

// String renders the path: Key and Index applied from the root.
func (p Path) String() string {
	if len(p.steps) == 0 {
		return p.root
	}
	var b strings.Builder
	n := len(p.root)
	for _, s := range p.steps {
		n += len(s.key) + 4
	}
	b.Grow(n)
	b.WriteString(p.root)
	for _, s := range p.steps {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

// Pointer renders the path below the root as a JSON Pointer (RFC 6901):
// "/config/items/2", "" for the root itself.
func (p Path) Pointer() string {
	var b strings.Builder
	for _, s := range p.steps {
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s.key, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func (p *Path) pushKey(k string) { p.push(step{key: k, index: -1}) }
func (p *Path) pushIndex(i int)  { p.push(step{index: i}) }
func (p *Path) pop()             { p.steps = p.steps[:len(p.steps)-1] }

// push grows the steps by one, starting at room for eight levels: one
// allocation serves a walk of most documents.
func (p *Path) push(s step) {
	if p.steps == nil {
		p.steps = make([]step, 0, 8)
	}
	p.steps = append(p.steps, s)
}

// Key appends a map key to a rendered path: "spec" and "url" make
// "spec.url", "" and "url" make "url".
func Key(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index appends a list index to a rendered path: "argv" and 1 make
// "argv[1]".
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
