package activities_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
)

// countingFile is the file provider counting its reads.
type countingFile struct {
	providers.Provider
	reads *atomic.Int32
}

func (c countingFile) Read(ctx context.Context, env providers.Env, want model.Spec) (providers.State, error) {
	c.reads.Add(1)
	return c.Provider.Read(ctx, env, want)
}

func (c countingFile) DiffValue(env providers.Env, want model.Spec, attr string) any {
	return c.Provider.(providers.DiffValuer).DiffValue(env, want, attr)
}

func (c countingFile) RestoreSpec(before providers.State) (model.Spec, error) {
	return c.Provider.(providers.Restorer).RestoreSpec(before)
}

// TestApplyBatchReadsEachFileOnce checks that a batch reads each file once,
// when it plans, and applies against that read: creates, an update and
// unchanged files alike.
func TestApplyBatchReadsEachFileOnce(t *testing.T) {
	st := openStore(t)
	var reads atomic.Int32
	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	reg.Register(countingFile{Provider: providers.NewFile(), reads: &reads})
	f := &fixture{t: t, st: st, acts: activities.New(activities.Deps{Store: st, Registry: reg, Packages: prepare.GraphsLoader{}}), root: t.TempDir()}
	dir := filepath.Join(f.root, "d")
	require.NoError(t, os.Mkdir(dir, 0o755))
	hash := f.snapshot(filesDocs(dir, 5))
	stack := f.stack("")

	tests := []struct {
		name   string
		before func(t *testing.T)
		want   map[model.Outcome]int // unchanged steps are left out of a batch's result
	}{
		{"create", nil, map[model.Outcome]int{model.OutcomeCreated: 5}},
		{"one edited since", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f002"), []byte("edited"), 0o644))
		}, map[model.Outcome]int{model.OutcomeUpdated: 1}},
		{"converged", nil, map[model.Outcome]int{}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before(t)
			}
			execID := "exec-reads-" + string(rune('a'+i))
			plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: stack.ID, SnapshotHash: hash})
			var batch *contract.Unit
			for j, u := range plan.Units {
				if u.Batch {
					batch = &plan.Units[j]
				}
			}
			require.NotNil(t, batch, "units %+v", plan.Units)
			require.Equal(t, 6, batch.Count, "units %+v", plan.Units) // the directory and its files
			reads.Store(0)
			res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: *batch})
			require.NoError(t, err)
			n := reads.Load()
			assert.Equal(t, int32(5), n, "5 files read %d times, want once each", n)
			got := map[model.Outcome]int{}
			for _, s := range res.Steps {
				if s.Outcome != model.OutcomeUnchanged {
					got[s.Outcome]++
				}
			}
			require.True(t, maps.Equal(got, tt.want), "outcomes %v, want %v", got, tt.want)
			for j := range 5 {
				data, err := os.ReadFile(filepath.Join(dir, "f00"+string(rune('0'+j))))
				require.NoError(t, err, "f00%d holds %q, %v", j, data, err)
				require.Equal(t, "x", string(data), "f00%d holds %q, %v", j, data, err)
			}
		})
	}
}
