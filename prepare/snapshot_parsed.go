package prepare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// parsedSnapshotVersion is the version of the parsed form; a snapshot with
// another version is parsed from its sources.
const parsedSnapshotVersion = 1

// parsedSnapshotSource is the first source of a snapshot that also carries
// the parsed package. The parsed form rides on a source because every
// reader of PackageSnapshot (export, older workers) ignores fields it does
// not know, so the snapshot stays readable as sources by all of them.
type parsedSnapshotSource struct {
	SnapshotSource
	Parsed *parsedPackage `json:"parsed,omitempty"`
}

// parsedPackage is a package as the parser left it: the resources, and
// their positions (which JSON does not carry on Resource) for messages.
type parsedPackage struct {
	Version   int              `json:"version"`
	Package   *model.Package   `json:"package"`
	Positions []model.Position `json:"positions,omitempty"`
	// Kinds are the kinds the source defines: only part snapshots carry
	// them (a package snapshot with kinds keeps its sources only).
	Kinds []kinds.Kind `json:"kinds,omitempty"`
}

// EncodeParsedPackageSnapshot is the snapshot content of sources together
// with docs, what graphs.Parse made of them, so that the preparation decodes the
// package instead of parsing it again. Packages that define kinds or hold
// graphs keep their sources only: the worker's catalogue must learn those
// kinds by parsing. The content is deterministic (equal inputs give equal
// bytes), so snapshots stay content-addressed.
func EncodeParsedPackageSnapshot(docs *graphs.Documents, sources ...SnapshotSource) ([]byte, error) {
	if docs == nil || docs.Package == nil || len(docs.Kinds) > 0 || len(docs.Graphs) > 0 || len(sources) == 0 {
		return EncodePackageSnapshot(sources...)
	}
	pp := &parsedPackage{Version: parsedSnapshotVersion, Package: docs.Package}
	for i, r := range docs.Package.Resources {
		if r.Pos != (model.Position{}) {
			if pp.Positions == nil {
				pp.Positions = make([]model.Position, len(docs.Package.Resources))
			}
			pp.Positions[i] = r.Pos
		}
	}
	out := make([]any, len(sources))
	out[0] = parsedSnapshotSource{SnapshotSource: sources[0], Parsed: pp}
	for i, s := range sources[1:] {
		out[i+1] = s
	}
	content, err := json.Marshal(map[string]any{"sources": out})
	if err != nil {
		// Values JSON cannot hold: keep the sources, which the preparation parses.
		return EncodePackageSnapshot(sources...)
	}
	return content, nil
}

// decodeParsedSnapshot returns the parsed package content carries, or nil
// when it carries none (the caller then parses the sources).
func decodeParsedSnapshot(content []byte) (*model.Package, error) {
	trimmed := bytes.TrimSpace(content)
	if len(trimmed) == 0 || trimmed[0] != '{' || !bytes.Contains(content, []byte(`"parsed"`)) {
		return nil, nil
	}
	var snap struct {
		Sources []json.RawMessage `json:"sources"`
	}
	if json.Unmarshal(trimmed, &snap) != nil || len(snap.Sources) == 0 {
		return nil, nil
	}
	var first struct {
		Parsed json.RawMessage `json:"parsed"`
	}
	if json.Unmarshal(snap.Sources[0], &first) != nil || len(first.Parsed) == 0 {
		return nil, nil
	}
	pp, err := decodeParsed(first.Parsed)
	if err != nil {
		return nil, fmt.Errorf("package snapshot: %w", err)
	}
	if pp == nil {
		return nil, nil
	}
	return pp.Package, nil
}

// decodeParsed decodes a parsed package; nil when it is of another
// version (its sources are then parsed instead).
func decodeParsed(raw json.RawMessage) (*parsedPackage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	// Numbers are read as the parser gives them: int64 when whole and in
	// range, float64 otherwise.
	dec.UseNumber()
	var pp parsedPackage
	if err := dec.Decode(&pp); err != nil {
		return nil, fmt.Errorf("parsed package: %w", err)
	}
	if pp.Version != parsedSnapshotVersion || pp.Package == nil {
		return nil, nil
	}
	if pp.Positions != nil && len(pp.Positions) != len(pp.Package.Resources) {
		return nil, fmt.Errorf("%d positions for %d resources", len(pp.Positions), len(pp.Package.Resources))
	}
	for i, r := range pp.Package.Resources {
		if r == nil {
			return nil, fmt.Errorf("resource %d is empty", i)
		}
		if pp.Positions != nil {
			r.Pos = pp.Positions[i]
		}
		for k, v := range r.Spec {
			r.Spec[k] = parserNumbers(v)
		}
	}
	for i := range pp.Kinds {
		for k, v := range pp.Kinds[i].Defaults {
			pp.Kinds[i].Defaults[k] = parserNumbers(v)
		}
	}
	pp.Positions = nil
	return &pp, nil
}

// parserNumbers replaces the json.Numbers in v with the parser's number
// types.
func parserNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = parserNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = parserNumbers(e)
		}
	}
	return v
}
