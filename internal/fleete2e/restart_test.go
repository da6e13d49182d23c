package fleete2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// The server stops while an agent's step runs and comes back a few
// seconds after the step ended: the agent records the step's outcome
// once the server is back (it was not there to take it), the execution
// completes, and nothing ran twice.
func TestServerRestartsWhileAnAgentsStepRuns(t *testing.T) {
	dev := testenv.Temporal(t)
	bin := testenv.BuildCairn(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := startServer(t, bin, dir, dev.HostPort, nil)
	c := srv.client
	_, err := c.CreateRelease(ctx, model.ReleaseInput{ID: "rel", Name: "rel"})
	require.NoError(t, err)
	_, err = c.PutGraph(ctx, model.LayerRelease, "rel", "default", client.Document{Format: "yaml", Data: []byte(`
- id: slow
  type: shell
  roles: [edge]
  parameters: {cmd: "touch slow.started; sleep 4; echo slow >> runs.log"}
- id: after
  type: shell
  roles: [edge]
  requires: [slow]
  parameters: {cmd: "echo after >> runs.log"}
- id: last
  type: shell
  roles: [core]
  requires: [after]
  parameters: {cmd: "echo last >> runs.log"}
`)})
	require.NoError(t, err)
	_, err = c.CreateCluster(ctx, model.ClusterInput{ID: "restart", Name: "restart", ReleaseID: "rel", Nodes: []model.Node{
		{ID: "core", Roles: []string{"core"}, Mode: model.NodeLocal},
		{ID: "edge", Roles: []string{"edge"}, Mode: model.NodeAgent},
	}})
	require.NoError(t, err)
	tok, err := c.IssueNodeToken(ctx, "restart", "edge")
	require.NoError(t, err)
	root := filepath.Join(dir, "agents", "edge")
	agent, err := testenv.AgentSpec{Bin: bin, Server: srv.url(), Temporal: dev.HostPort, Token: tok.Token, Node: "edge",
		Root: root, Log: filepath.Join(dir, "agents", "edge.log")}.Start()
	require.NoError(t, err)
	t.Cleanup(agent.Crash)

	ex, err := c.ExecuteGraph(ctx, "restart", contract.GraphRequest{})
	require.NoError(t, err)
	waitFile(ctx, t, filepath.Join(root, "slow.started"), "")
	srv.stop()
	// The step ends while the server is away; its outcome waits.
	waitFile(ctx, t, filepath.Join(root, "runs.log"), "slow\n")
	time.Sleep(2 * time.Second)
	srv.start()

	done, err := c.Wait(ctx, ex.ID, 250*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, done.Status, "execution %s: %s", done.ID, done.Error)
	b, err := os.ReadFile(filepath.Join(root, "runs.log"))
	require.NoError(t, err)
	assert.Equal(t, "slow\nafter\n", string(b), "each of the agent's steps ran once")
	b, err = os.ReadFile(filepath.Join(dir, "data", "nodes", "restart", "core", "runs.log"))
	require.NoError(t, err)
	assert.Equal(t, "last\n", string(b))
}
