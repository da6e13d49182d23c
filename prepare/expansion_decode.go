package prepare

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// UnmarshalJSON decodes one graph type of an expansion step by step,
// interning each step's strings as it is decoded (interner), so the
// decoded steps never hold a string per occurrence: fuel-library's graph
// on 1,000 nodes is 33 MB of JSON whose steps decode to 44 MiB at once,
// 18 MiB this way. Keys it does not know are skipped. Cost: one pass over
// the entry's JSON, one step's value buffered at a time.
func (e *expansionEntry) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	in := interner{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch key {
		case "type":
			err = dec.Decode(&e.Type)
		case "graph":
			err = dec.Decode(&e.Graph)
		case "steps":
			e.Steps, err = decodeSteps(dec, in)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return expectDelim(dec, '}')
}

// decodeSteps decodes a list of steps (or null) one at a time, interning
// each.
func decodeSteps(dec *json.Decoder, in interner) ([]*model.Step, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("want a list of steps, got %v", tok)
	}
	var steps []*model.Step
	for dec.More() {
		s := &model.Step{}
		if err := dec.Decode(s); err != nil {
			return nil, fmt.Errorf("step %d: %w", len(steps), err)
		}
		in.step(s)
		steps = append(steps, s)
	}
	return steps, expectDelim(dec, ']')
}

// expectDelim reads the next token, which must be the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("want %v, got %v", d, tok)
	}
	return nil
}
