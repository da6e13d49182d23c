package prepare

import (
	"encoding/json"
)

// encode is json.Marshal(d), byte for byte (a snapshot's hash is its
// content's, so equal expansions still share one), built without
// json.Marshal's buffer: each step is encoded on its own, then all of it
// is copied once into a buffer of the exact size. On fuel-library's graph
// on 1,000 nodes (33 MB of JSON) json.Marshal of the whole doubled its
// buffer up to 64 MB and returned a copy of it; this holds the steps'
// encodings and the result. Cost: one encoding of each step, one copy.
func (d *expansionDoc) encode() ([]byte, error) {
	var parts [][]byte
	size := 0
	add := func(b []byte) {
		parts = append(parts, b)
		size += len(b)
	}
	put := func(v any) error {
		raw, err := json.Marshal(v)
		if err == nil {
			add(raw)
		}
		return err
	}
	lit := func(s string) { add([]byte(s)) }
	lit(`{"cluster":`)
	if err := put(d.Cluster); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key  string
		list []string
	}{{`,"nodes":`, d.Nodes}, {`,"tasks":`, d.Tasks}} {
		if len(f.list) > 0 { // omitempty
			lit(f.key)
			if err := put(f.list); err != nil {
				return nil, err
			}
		}
	}
	lit(`,"types":`)
	if d.Types == nil {
		lit("null")
	} else {
		lit("[")
		for i := range d.Types {
			if err := d.Types[i].encode(lit, put, i > 0); err != nil {
				return nil, err
			}
		}
		lit("]")
	}
	lit("}")
	out := make([]byte, 0, size)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// encode adds one entry as json.Marshal writes it, after a comma unless
// first.
func (e *expansionEntry) encode(lit func(string), put func(any) error, comma bool) error {
	if comma {
		lit(",")
	}
	lit(`{"type":`)
	if err := put(e.Type); err != nil {
		return err
	}
	lit(`,"graph":`)
	if err := put(e.Graph); err != nil {
		return err
	}
	lit(`,"steps":`)
	if e.Steps == nil {
		lit("null}")
		return nil
	}
	lit("[")
	for i, s := range e.Steps {
		if i > 0 {
			lit(",")
		}
		if err := put(s); err != nil {
			return err
		}
	}
	lit("]}")
	return nil
}
