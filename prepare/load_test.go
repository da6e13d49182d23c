package prepare_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/prepare"
)

// parsedPackageSnapshot validates docs as the API does and returns the snapshot
// content carrying the parsed package next to sources.
func parsedPackageSnapshot(t *testing.T, docs string, sources ...prepare.SnapshotSource) (*graphs.Documents, []byte) {
	t.Helper()
	parsed, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "p.yaml", Format: graphs.FormatYAML, Data: []byte(docs)})
	require.NoError(t, err)
	content, err := prepare.EncodeParsedPackageSnapshot(parsed, sources...)
	require.NoError(t, err)
	return parsed, content
}

func TestLoaderReadsParsedAndSourceSnapshots(t *testing.T) {
	docs := `apiVersion: cairn/v1
kind: File
metadata: {name: a}
spec: {path: /tmp/a, content: "x", mode: 420}
---
apiVersion: cairn/v1
kind: File
metadata: {name: b}
spec: {path: /tmp/b, content: "{{ .deps.a.checksum }}"}
dependsOn: [File/a]
`
	valid := prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs}
	// Sources the parser refuses: a snapshot that still loads did not
	// parse them.
	broken := prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: "kind: [unclosed"}
	parsed, withParsed := parsedPackageSnapshot(t, docs, broken)
	_, again := parsedPackageSnapshot(t, docs, broken)
	require.Equal(t, again, withParsed, "equal packages encode to different snapshots")
	old, err := prepare.EncodePackageSnapshot(valid)
	require.NoError(t, err)
	// Readers of the sources alone (export, older workers) still find them.
	snap, err := prepare.DecodePackageSnapshot(withParsed)
	require.NoError(t, err, "sources of the parsed snapshot: %+v, %v", snap, err)
	require.Len(t, snap.Sources, 1, "sources of the parsed snapshot: %+v, %v", snap, err)
	require.Equal(t, broken, snap.Sources[0], "sources of the parsed snapshot: %+v, %v", snap, err)
	tests := []struct {
		name    string
		content []byte
	}{
		{"parsed package, sources not parsed", withParsed},
		{"sources only", old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prepare.GraphsLoader{}.Load(context.Background(), tt.content, nil, nil)
			require.NoError(t, err)
			require.Equal(t, parsed.Package.Resources, got.Package.Resources, "resources differ from the parser's:\n got %#v\nwant %#v", got.Package.Resources, parsed.Package.Resources)
			require.Equal(t, 1, got.Package.Resources[0].Pos.Line, "positions lost: %+v", got.Package.Resources[1].Pos)
			require.NotEqual(t, 0, got.Package.Resources[1].Pos.Line, "positions lost: %+v", got.Package.Resources[1].Pos)
			_, ok := got.Package.Resources[0].Spec["mode"].(int64)
			require.True(t, ok, "mode is %T, want the parser's int64", got.Package.Resources[0].Spec["mode"])
			require.Len(t, got.Steps, 2, "%d steps, catalogue %v", len(got.Steps), got.Catalogue)
			require.NotNil(t, got.Catalogue, "%d steps, catalogue %v", len(got.Steps), got.Catalogue)
		})
	}
	// Source-only snapshot of a package defining a kind: keeps the sources
	// only, so the worker learns the kind by parsing.
	kindDocs := `apiVersion: cairn/v1
kind: Kind
metadata: {name: Motd}
spec: {base: file}
---
apiVersion: cairn/v1
kind: Motd
metadata: {name: m}
spec: {path: /tmp/m, content: hi}
`
	kindSrc := prepare.SnapshotSource{Name: "k.yaml", Format: "yaml", Data: kindDocs}
	parsedKinds, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "k.yaml", Format: graphs.FormatYAML, Data: []byte(kindDocs)})
	require.NoError(t, err)
	content, err := prepare.EncodeParsedPackageSnapshot(parsedKinds, kindSrc)
	require.NoError(t, err)
	plain, _ := prepare.EncodePackageSnapshot(kindSrc)
	require.Equal(t, plain, content, "a package defining kinds carries a parsed form")
}
