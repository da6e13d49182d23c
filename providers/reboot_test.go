package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestRebootSimulated plays a local node's reboot: the step restarts the
// node's worker (here: cancels the step's context, as a stopping worker
// does) and is run again by the worker that comes back, with a new boot.
func TestRebootSimulated(t *testing.T) {
	root := t.TempDir()
	reg := fuelRegistry(nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	restarted := 0
	first := NewHost(func() {
		restarted++
		cancel(errors.New("worker stopping"))
	})
	req := Request{Kind: "reboot", Name: "node_reboot", Intent: "exec-1/node_reboot@n1", Node: Node{Name: "n1", Root: root, Host: first},
		Spec: model.Spec{"timeout": 900}}

	plan, err := reg.Converge(context.Background(), Request{Kind: req.Kind, Name: req.Name, Intent: req.Intent, Node: req.Node, Spec: req.Spec, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionRun, plan.Action)
	assert.True(t, plan.Irreversible)
	assert.Zero(t, restarted, "a dry-run does not reboot")

	_, err = reg.Converge(ctx, req)
	require.Error(t, err, "the first run is cut off by its worker's restart")
	assert.Equal(t, 1, restarted)

	// The same worker again (a retry before the restart took effect):
	// it waits rather than rebooting twice.
	short, stop := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer stop()
	_, err = reg.Converge(short, req)
	require.Error(t, err)
	assert.Equal(t, 1, restarted, "no second reboot")

	// The worker that came back.
	req.Node.Host = NewHost(func() { t.Fatal("rebooted again") })
	ch, err := reg.Converge(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionRun, ch.Action)
	assert.Contains(t, ch.After.Outputs, "rebootedAfter")
	entries, err := os.ReadDir(filepath.Join(root, "var/lib/cairn/reboot"))
	require.NoError(t, err)
	assert.Empty(t, entries, "the marker is removed")
}

func TestRebootCommand(t *testing.T) {
	root := t.TempDir()
	flag := filepath.Join(t.TempDir(), "rebooted")
	reg := fuelRegistry(nil)
	reg.Register(NewReboot("touch " + flag))
	req := Request{Kind: "reboot", Name: "node_reboot", Intent: "x", Node: Node{Name: "n1", Root: root, Host: NewHost(nil)},
		Spec: model.Spec{"timeout": 0.3}}
	_, err := reg.Converge(context.Background(), req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not reboot within")
	assert.FileExists(t, flag, "the configured command ran")

	reg.Register(NewReboot("exit 3"))
	req.Intent = "y"
	_, err = reg.Converge(context.Background(), req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited 3")

	_, err = reg.Converge(context.Background(), Request{Kind: "reboot", Name: "r", Node: Node{}, Spec: model.Spec{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nodes only")
}

func TestRebootCameBackTooLate(t *testing.T) {
	root := t.TempDir()
	reg := fuelRegistry(nil)
	env := Env{Name: "r", Intent: "late", Node: Node{Name: "n1", Root: root, Host: NewHost(nil)}}
	path, err := markerPath(env)
	require.NoError(t, err)
	require.NoError(t, writeMarker(path, &rebootMarker{Boot: "old", Started: time.Now().Add(-time.Hour), Deadline: time.Now().Add(-time.Minute)}))
	_, err = reg.Converge(context.Background(), Request{Kind: "reboot", Name: "r", Intent: "late", Node: env.Node, Spec: model.Spec{"timeout": 60}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "past its timeout")
}
