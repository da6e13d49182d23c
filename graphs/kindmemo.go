package graphs

import "github.com/cairn-io/cairn/kinds"

// kindMemo remembers a catalogue's lookups by name. Reading or building a
// package looks each resource's kind up several times, and each lookup of
// the catalogue copies the kind: at 100,000 resources that is most of what
// a build allocates. The kinds it hands out are its own copies, shared by
// every lookup of the same name: read them, never change them.
type kindMemo struct {
	cat  *kinds.Catalogue
	hits map[string]kindHit
}

type kindHit struct {
	k  *kinds.Kind
	ok bool
}

func newKindMemo(cat *kinds.Catalogue) *kindMemo {
	return &kindMemo{cat: cat, hits: map[string]kindHit{}}
}

// lookup is cat.Lookup, once per name.
func (m *kindMemo) lookup(name string) (*kinds.Kind, bool) {
	if h, ok := m.hits[name]; ok {
		return h.k, h.ok
	}
	k, ok := m.cat.Lookup(name)
	m.hits[name] = kindHit{k, ok}
	return k, ok
}
