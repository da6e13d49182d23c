package graphe2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// A running agent whose token is revoked is refused from its next
// request: it runs nothing of the step it took, stops polling and exits
// with an error, so the node's steps wait for an agent with a valid
// token (here, until the node wait fails them), which then runs them.
func TestRevokedAgentStops(t *testing.T) {
	h := newHarness(t, harnessOptions{nodeWait: 10 * time.Second}, model.Node{ID: "r1", Name: "r1", Roles: []string{"compute"}, Mode: model.NodeAgent})
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: hello
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo hello > hello.txt"}
`)
	root := filepath.Join(t.TempDir(), "r1")
	revoked := h.startAgent("r1", root)
	require.NoError(t, h.st.DeleteNodeTokenHash(context.Background(), h.cluster, "r1"))

	done := h.run(contract.GraphRequest{})
	mustStatus(t, done, model.ExecFailed)
	_, err := os.Stat(filepath.Join(root, "hello.txt"))
	assert.True(t, os.IsNotExist(err), "the revoked agent ran the step's command")
	exited := make(chan error, 1)
	go func() { exited <- revoked.cmd.Wait() }()
	select {
	case err := <-exited:
		require.Error(t, err, "the revoked agent exited cleanly")
	case <-time.After(time.Minute):
		t.Fatal("the revoked agent still runs a minute after the execution failed")
	}

	h.startAgent("r1", root) // a new token
	mustStatus(t, h.run(contract.GraphRequest{}), model.ExecCompleted)
	assert.Equal(t, "hello\n", readFile(t, filepath.Join(root, "hello.txt")))
}
