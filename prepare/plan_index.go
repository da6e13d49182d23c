package prepare

import (
	"bytes"
	"encoding/json"

	"github.com/cairn-io/cairn/planner"
)

// encodeIndex is the JSON list of the steps' index entries (IndexEntry),
// in the order given. Each entry is encoded on its own into one buffer
// sized ahead from the entries' strings, so the index, which lists every
// step's dependencies (25 MB on fuel-library's release graph on 1,000
// nodes), is built once: json.Marshal of the whole list would hold the
// entries, its buffer as it doubles, and the copy it returns. Cost: one
// pass over the steps to size the buffer, one to encode.
func encodeIndex(steps []*planner.StoredStep) ([]byte, error) {
	size := 2
	for _, s := range steps {
		size += 64 + len(s.ID) + len(s.Kind) + len(s.RecordKind) + len(s.Name) + len(s.Node) + 96*len(s.Associations)
		for _, d := range planner.Deps(&s.Step) {
			size += len(d) + 3
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	enc := json.NewEncoder(buf) // each entry followed by a newline: JSON whitespace
	buf.WriteByte('[')
	for i, s := range steps {
		if i > 0 {
			buf.WriteByte(',')
		}
		err := enc.Encode(IndexEntry{ID: s.ID, Kind: s.Kind, RecordKind: s.RecordKind, Name: s.Name, Node: s.Node,
			Associations: s.Associations, Delete: s.Delete, Deps: planner.Deps(&s.Step)})
		if err != nil {
			return nil, err
		}
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}
