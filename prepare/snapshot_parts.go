package prepare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// PackagePartSnapshotKind is the store's snapshot kind of one part of a
// package sent in parts (an upload): its source and the resources read
// from it, as a package snapshot holds them.
const PackagePartSnapshotKind = "package-part"

// PackageManifest is the package snapshot of a package sent in parts: the
// snapshots of its parts (PackagePartSnapshotKind), in package order. A
// package of 100,000 resources is then never one value: each part is
// read, decoded and dropped in turn.
type PackageManifest struct {
	Parts []ManifestPart `json:"parts"`
}

// ManifestPart is one part of a manifest: its snapshot's hash and how many
// resources it holds.
type ManifestPart struct {
	Hash      string `json:"hash"`
	Resources int    `json:"resources"`
}

// EncodePackageManifest is the snapshot content of a manifest, to store
// with store.PutSnapshot(ctx, PackageSnapshotKind, content).
func EncodePackageManifest(m PackageManifest) ([]byte, error) {
	if len(m.Parts) == 0 {
		return nil, errors.New("a package manifest needs at least one part")
	}
	return json.Marshal(m)
}

// DecodePackageManifest reads a package snapshot's content as a manifest;
// ok is false when the content is not one (a package snapshot of sources).
func DecodePackageManifest(content []byte) (m *PackageManifest, ok bool, err error) {
	trimmed := bytes.TrimSpace(content)
	if len(trimmed) == 0 || trimmed[0] != '{' || !bytes.HasPrefix(trimmed, []byte(`{"parts":`)) {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var out PackageManifest
	if err := dec.Decode(&out); err != nil {
		return nil, true, fmt.Errorf("package manifest: %w", err)
	}
	if len(out.Parts) == 0 {
		return nil, true, errors.New("package manifest: no parts")
	}
	return &out, true, nil
}

// PartSource is the source of one part of an upload, placed in the stream
// it was cut from (graphs.Source.Line and Doc).
type PartSource struct {
	SnapshotSource
	Line int `json:"line,omitempty"`
	Doc  int `json:"doc,omitempty"`
}

// partSnapshot is the content of a part snapshot: its source (Jsonnet
// evaluated) and what it was read into.
type partSnapshot struct {
	Source PartSource     `json:"source"`
	Parsed *parsedPackage `json:"parsed"`
}

// EncodePartSnapshot is the content of a part snapshot: src as it came
// (evaluate turns Jsonnet into JSON) with docs, what graphs.Parse read of
// it (with graphs.Options.Part), the kinds it defines included. Cost:
// one evaluation for Jsonnet, the resources encoded once.
func EncodePartSnapshot(ctx context.Context, docs *graphs.Documents, evaluate SourceEvaluator, src graphs.Source) ([]byte, error) {
	ev, err := evaluate(ctx, src)
	if err != nil {
		return nil, err
	}
	pp := &parsedPackage{Version: parsedSnapshotVersion, Package: docs.Package, Kinds: docs.Kinds}
	for i, r := range docs.Package.Resources {
		if r.Pos != (model.Position{}) {
			if pp.Positions == nil {
				pp.Positions = make([]model.Position, len(docs.Package.Resources))
			}
			pp.Positions[i] = r.Pos
		}
	}
	content, err := json.Marshal(partSnapshot{
		Source: PartSource{SnapshotSource: SnapshotSource{Name: ev.Name, Format: string(ev.Format), Data: string(ev.Data)}, Line: src.Line, Doc: src.Doc},
		Parsed: pp,
	})
	if err != nil {
		return nil, fmt.Errorf("encode part snapshot: %w", err)
	}
	return content, nil
}

// decodePartSnapshot reads a part snapshot: its source's name (not its
// data) and the resources and kinds read from it.
func decodePartSnapshot(content []byte) (*PartSource, *parsedPackage, error) {
	var raw struct {
		Source struct {
			Name string `json:"name"`
		} `json:"source"`
		Parsed json.RawMessage `json:"parsed"`
	}
	if err := json.Unmarshal(content, &raw); err != nil {
		return nil, nil, fmt.Errorf("part snapshot: %w", err)
	}
	pp, err := decodeParsed(raw.Parsed)
	if err != nil {
		return nil, nil, fmt.Errorf("part snapshot: %w", err)
	}
	if pp == nil {
		return nil, nil, errors.New("part snapshot: no parsed package")
	}
	return &PartSource{SnapshotSource: SnapshotSource{Name: raw.Source.Name}}, pp, nil
}

// PackageSources lists the sources of a package snapshot: those it holds,
// or, for a manifest, those of its parts read through st (in order, each
// placed by its Line and Doc). Cost: one store read per part.
func PackageSources(ctx context.Context, st SnapshotReader, content []byte) ([]graphs.Source, error) {
	m, isManifest, err := DecodePackageManifest(content)
	if err != nil {
		return nil, err
	}
	if !isManifest {
		snap, err := DecodePackageSnapshot(content)
		if err != nil {
			return nil, err
		}
		out := make([]graphs.Source, len(snap.Sources))
		for i, s := range snap.Sources {
			out[i] = graphs.Source{Name: s.Name, Data: []byte(s.Data), Format: graphs.Format(s.Format)}
		}
		return out, nil
	}
	out := make([]graphs.Source, 0, len(m.Parts))
	for i, p := range m.Parts {
		part, err := readPart(ctx, st, i, p.Hash)
		if err != nil {
			return nil, err
		}
		var raw struct {
			Source PartSource `json:"source"`
		}
		if err := json.Unmarshal(part, &raw); err != nil {
			return nil, fmt.Errorf("part %d: %w", i+1, err)
		}
		s := raw.Source
		out = append(out, graphs.Source{Name: s.Name, Data: []byte(s.Data), Format: graphs.Format(s.Format), Line: s.Line, Doc: s.Doc})
	}
	return out, nil
}

// readPart reads the content of a manifest's part i (0-based).
func readPart(ctx context.Context, st SnapshotReader, i int, hash string) ([]byte, error) {
	snap, err := st.GetSnapshot(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("part %d (%s): %w", i+1, ShortHash(hash), err)
	}
	if snap.Kind != PackagePartSnapshotKind {
		return nil, fmt.Errorf("part %d (%s) is a %q snapshot, not a package part", i+1, ShortHash(hash), snap.Kind)
	}
	return snap.Content, nil
}

// loadManifest reads a manifest's parts in turn into one package: each
// part's resources, and its kinds into the catalogue (a clone of cat when
// a part defines any). Only one part's content is held at a time, and a
// large package's garbage is collected after each part (see collect).
// Cost: one store read and one decode per part.
func loadManifest(ctx context.Context, st SnapshotReader, m *PackageManifest, cat *kinds.Catalogue) (*model.Package, *kinds.Catalogue, error) {
	total := 0
	for _, p := range m.Parts {
		total += p.Resources
	}
	pkg := &model.Package{Resources: make([]*model.Resource, 0, total)}
	cloned := false
	for i, p := range m.Parts {
		content, err := readPart(ctx, st, i, p.Hash)
		if err != nil {
			return nil, nil, err
		}
		src, pp, err := decodePartSnapshot(content)
		if err != nil {
			return nil, nil, fmt.Errorf("part %d: %w", i+1, err)
		}
		if len(pp.Kinds) > 0 {
			if !cloned {
				cat, cloned = cat.Clone(), true
			}
			for _, k := range pp.Kinds {
				if err := cat.Add(k); err != nil {
					return nil, nil, fmt.Errorf("part %d: %w", i+1, err)
				}
			}
		}
		if n := len(pkg.Sources); n == 0 || pkg.Sources[n-1] != src.Name {
			pkg.Sources = append(pkg.Sources, src.Name)
		}
		pkg.Resources = append(pkg.Resources, pp.Package.Resources...)
		content, pp = nil, nil
		collect(total)
	}
	return pkg, cat, nil
}
