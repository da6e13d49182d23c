package prepare_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/prepare"
)

// Encoded snapshots decode to their sources; other content is one
// document, JSON when it starts like JSON.
func TestDecodePackageSnapshot(t *testing.T) {
	src := prepare.SnapshotSource{Name: "p.jsonnet", Format: "json", Data: `{"a": 1}`}
	content, err := prepare.EncodePackageSnapshot(src)
	require.NoError(t, err)
	snap, err := prepare.DecodePackageSnapshot(content)
	require.NoError(t, err)
	assert.Equal(t, []prepare.SnapshotSource{src}, snap.Sources)

	snap, err = prepare.DecodePackageSnapshot([]byte("kind: File\n"))
	require.NoError(t, err)
	assert.Equal(t, []prepare.SnapshotSource{{Name: "package", Format: "yaml", Data: "kind: File\n"}}, snap.Sources)
	snap, err = prepare.DecodePackageSnapshot([]byte(` [{"kind": "File"}]`))
	require.NoError(t, err)
	assert.Equal(t, "json", snap.Sources[0].Format)
	_, err = prepare.DecodePackageSnapshot([]byte(" \n"))
	assert.Error(t, err)
}

// EncodeSources keeps each source evaluated, and says an evaluation's
// failure as it was.
func TestEncodeSourcesEvaluatesJsonnet(t *testing.T) {
	docs := "apiVersion: cairn/v1\nkind: File\nmetadata: {name: a}\nspec: {path: /tmp/a, content: x}\n"
	parsed, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "p.yaml", Format: graphs.FormatYAML, Data: []byte(docs)})
	require.NoError(t, err)
	evaluate := func(_ context.Context, src graphs.Source) (graphs.Source, error) {
		if src.Format != graphs.FormatJsonnet {
			return src, nil
		}
		return graphs.Source{Name: src.Name, Format: graphs.FormatJSON, Data: []byte(`{"evaluated": true}`)}, nil
	}
	content, err := prepare.EncodeSources(context.Background(), parsed, evaluate,
		graphs.Source{Name: "p.yaml", Format: graphs.FormatYAML, Data: []byte(docs)},
		graphs.Source{Name: "q.jsonnet", Format: graphs.FormatJsonnet, Data: []byte(`{evaluated: true}`)})
	require.NoError(t, err)
	snap, err := prepare.DecodePackageSnapshot(content)
	require.NoError(t, err)
	require.Len(t, snap.Sources, 2)
	assert.Equal(t, prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs}, snap.Sources[0])
	assert.Equal(t, prepare.SnapshotSource{Name: "q.jsonnet", Format: "json", Data: `{"evaluated": true}`}, snap.Sources[1])

	boom := errors.New("sandbox gone")
	_, err = prepare.EncodeSources(context.Background(), parsed, func(context.Context, graphs.Source) (graphs.Source, error) {
		return graphs.Source{}, boom
	}, graphs.Source{Name: "p.yaml", Format: graphs.FormatYAML, Data: []byte(docs)})
	assert.ErrorIs(t, err, boom)
}
