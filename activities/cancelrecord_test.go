package activities_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/providers"
)

// cancelOnOutputs is step data whose activity is cancelled as the outputs
// of its commands are about to be written, as when Temporal cancels an
// attempt (or a heartbeat fails) just after a command ran.
type cancelOnOutputs struct {
	activities.StepData
	cancel context.CancelFunc
}

func (c cancelOnOutputs) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	if kind == contract.DataOutputs && len(data) > 0 {
		c.cancel()
	}
	return c.StepData.PutStepDataBatch(ctx, execID, kind, data)
}

// A command that ran is recorded even when its activity is cancelled
// right after: the retried unit finds it done and does not run it again.
func TestCommandThatRanIsRecordedWhenItsActivityIsCancelled(t *testing.T) {
	f := newFixture(t)
	execID := "exec-cancelled-after-a-command"
	plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: f.stack("").ID, SnapshotHash: f.snapshot(chainDocs(f.root, ""))})
	require.Len(t, plan.Units, 1)
	u := plan.Units[0]

	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := activities.New(activities.Deps{Store: f.st, Steps: cancelOnOutputs{StepData: f.st, cancel: cancel}, Registry: reg})
	_, err := cancelled.ApplyBatch(ctx, contract.UnitInput{ExecutionID: execID, Unit: u})
	require.Error(t, err, "the unit went on after its activity was cancelled")
	require.ErrorIs(t, ctx.Err(), context.Canceled)

	res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: u, Rerun: true})
	require.NoError(t, err)
	for id, r := range outcomes(res) {
		assert.Empty(t, r.Error, id)
	}
	marks, err := os.ReadFile(filepath.Join(f.root, "d", "mark.log"))
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(marks), "the command ran once")
}
