package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

func TestHookRunsTheConfiguredCommand(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "calls")
	reg := fuelRegistry(map[string]string{
		"erase_node":   `printf '%s %s ' "$CAIRN_HOOK" "$CAIRN_TASK_NODE" >> ` + out + ` && cat >> ` + out + ` && echo >> ` + out,
		"cobbler_sync": "echo broken >&2; exit 4",
	})
	req := Request{Kind: "hook", Name: "node_erase", Node: Node{}, Spec: model.Spec{
		"hook": "erase_node", "node": "node-2", "timeout": 30, "parameters": map[string]any{"slave_name": "node-2.domain"},
	}}
	ch, err := reg.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionRun, ch.Action)
	assert.True(t, ch.Irreversible)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "erase_node node-2 {\"slave_name\":\"node-2.domain\"}\n", string(b))
	assert.ErrorIs(t, reg.Compensate(ctx, req, ch), ErrIrreversible)

	_, err = reg.Converge(ctx, Request{Kind: "hook", Name: "sync", Spec: model.Spec{"hook": "cobbler_sync", "node": "node-2"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited 4: broken")

	_, err = reg.Converge(ctx, Request{Kind: "hook", Name: "mtb", Spec: model.Spec{"hook": "move_to_bootstrap", "node": "node-2"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set "+kinds.HookSetting("move_to_bootstrap"))

	_, err = reg.Converge(ctx, Request{Kind: "hook", Name: "x", Spec: model.Spec{"hook": "format_disk"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown provisioning hook "format_disk"`)
}

func TestHookTimeout(t *testing.T) {
	reg := fuelRegistry(map[string]string{"erase_node": "sleep 30"})
	_, err := reg.Converge(context.Background(), Request{Kind: "hook", Name: "e", Spec: model.Spec{"hook": "erase_node", "node": "n", "timeout": 0.2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timed out")
}

func TestMasterShellRunsOnTheControlPlanePerNode(t *testing.T) {
	ctx := context.Background()
	cat := kinds.Builtin()
	dir := t.TempDir()
	reg := fuelRegistry(nil)
	for _, node := range []string{"node-1", "node-2"} {
		kind, spec, _, err := cat.TaskSpec("master_shell", map[string]any{"cmd": `echo "$CAIRN_TASK_NODE" >> ` + filepath.Join(dir, "netboot"), "timeout": 10})
		require.NoError(t, err)
		cat.ForNode("master_shell", spec, node)
		ch, err := reg.Converge(ctx, Request{Kind: kind, Name: "cobbler_disable_netboot", Node: Node{}, Spec: spec})
		require.NoError(t, err)
		assert.Equal(t, model.ActionRun, ch.Action)
		assert.True(t, ch.Irreversible, "no undo")
	}
	b, err := os.ReadFile(filepath.Join(dir, "netboot"))
	require.NoError(t, err)
	assert.Equal(t, "node-1\nnode-2\n", string(b))
}
