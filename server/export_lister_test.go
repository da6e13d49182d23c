package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/worker"
)

// The API's export lister lists the control plane's objects through the
// registry, and none is wired without a registry.
func TestExportListerListsTheControlPlane(t *testing.T) {
	assert.Nil(t, NewExportLister(nil), "no registry, no lister")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "motd"), []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o644))
	l := NewExportLister(worker.DefaultRegistry(kinds.Builtin(), nil))
	items, err := l.List(context.Background(), "File", model.ListQuery{Dir: dir, Names: []string{"motd"}})
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, filepath.Join(dir, "motd"), items[0].Spec["path"])
	assert.Equal(t, "hello\n", items[0].Spec["content"])

	_, err = l.List(context.Background(), "Exec", model.ListQuery{})
	assert.Error(t, err, "a kind without state cannot be listed")
}
