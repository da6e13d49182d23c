package prepare

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// PackageSnapshotKind is the store's snapshot kind of packages.
const PackageSnapshotKind = "package"

// PackageSnapshot is how a package's sources are kept as one snapshot: each
// document as it was given, with its name and format, so the preparation
// parses exactly what was validated.
type PackageSnapshot struct {
	Sources []SnapshotSource `json:"sources"`
}

// SnapshotSource is one source document of a package snapshot. Format is
// "yaml", "json" or "jsonnet".
type SnapshotSource struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Data   string `json:"data"`
}

// EncodePackageSnapshot is the snapshot content of sources, to store with
// store.PutSnapshot(ctx, PackageSnapshotKind, content).
func EncodePackageSnapshot(sources ...SnapshotSource) ([]byte, error) {
	return json.Marshal(PackageSnapshot{Sources: sources})
}

// DecodePackageSnapshot reads snapshot content. Content that is not an
// encoded PackageSnapshot is taken as one document, JSON when it starts
// like JSON and YAML otherwise.
func DecodePackageSnapshot(content []byte) (*PackageSnapshot, error) {
	trimmed := bytes.TrimSpace(content)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("empty package snapshot")
	}
	if trimmed[0] == '{' {
		var probe map[string]json.RawMessage
		if json.Unmarshal(trimmed, &probe) == nil {
			if raw, ok := probe["sources"]; ok && len(probe) == 1 {
				var snap PackageSnapshot
				if err := json.Unmarshal(raw, &snap.Sources); err != nil {
					return nil, fmt.Errorf("package snapshot: %w", err)
				}
				return &snap, nil
			}
		}
	}
	format := "yaml"
	if trimmed[0] == '{' || trimmed[0] == '[' {
		format = "json"
	}
	return &PackageSnapshot{Sources: []SnapshotSource{{Name: "package", Format: format, Data: string(content)}}}, nil
}
