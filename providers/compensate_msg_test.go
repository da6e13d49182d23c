package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-io/cairn/model"
	"github.com/stretchr/testify/require"
)

// TestCompensateNamesTheObjectOnce: an undo that fails in Converge says
// "compensate file/f: " and not Converge's "file/f: " again.
func TestCompensateNamesTheObjectOnce(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	req := Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "x"}}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err)
	require.Equal(t, model.OutcomeCreated, ch.Outcome)
	// The undo deletes the file; a directory in its place makes it fail.
	path := filepath.Join(node.Root, "f")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	err = r.Compensate(ctx, req, ch)
	require.Error(t, err)
	t.Log(err)
	require.True(t, strings.HasPrefix(err.Error(), "compensate file/f: "), err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "file/f"), err.Error())
}
