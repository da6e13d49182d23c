package store

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// driftCheckWithSecret is a drift check whose diff shows a value a
// resource holds.
func driftCheckWithSecret() model.DriftCheck {
	return model.DriftCheck{ExecutionID: "drift-s-1.r", Drifted: true, Resources: []model.PlanStep{{
		ID: "File/motd", Action: model.ActionUpdate,
		Changes: []model.AttrChange{{Path: "content", Old: "db-password=hunter2-diff", New: "x"}},
	}}}
}

func TestDriftRecordKeepsTheLastCheckAndGoesWithItsStack(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		st := &model.Stack{Name: "d"}
		require.NoError(t, s.CreateStack(ctx, st))
		require.ErrorIs(t, SaveDriftCheck(ctx, s, st.ID, driftCheckWithSecret()), ErrNotFound, "a check without a drift record")
		require.NoError(t, s.PutDriftSettings(ctx, st.ID, true, false))
		rec, err := s.GetDrift(ctx, st.ID)
		require.NoError(t, err)
		last, err := rec.Check()
		require.NoError(t, err)
		assert.Nil(t, last, "a check before the first")
		assert.True(t, rec.Repair)

		require.NoError(t, SaveDriftCheck(ctx, s, st.ID, driftCheckWithSecret()))
		rec, err = s.GetDrift(ctx, st.ID)
		require.NoError(t, err)
		last, err = rec.Check()
		require.NoError(t, err)
		assert.Equal(t, driftCheckWithSecret().Resources, last.Resources)

		exec, err := s.StackLastExecution(ctx, st.ID)
		require.NoError(t, err)
		assert.Empty(t, exec)
		_, err = s.WriteStackRecord(ctx, st.ID, "stack-d.run1", nil, "hash", "", true)
		require.NoError(t, err)
		exec, err = s.StackLastExecution(ctx, st.ID)
		require.NoError(t, err)
		assert.Equal(t, "stack-d.run1", exec)

		require.NoError(t, s.DeleteStack(ctx, st.ID))
		_, err = s.GetDrift(ctx, st.ID)
		assert.ErrorIs(t, err, ErrNotFound, "the drift record outlived its stack")
		_, err = s.StackLastExecution(ctx, st.ID)
		assert.ErrorIs(t, err, ErrNotFound)
	})
}

// Watching is a drift setting the store lists for a server to re-arm its
// watchers at start; it goes with the drift record and with the stack.
func TestWatchedStacksAreListedUntilTheSettingOrTheStackGoes(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		a, b, c := &model.Stack{Name: "a"}, &model.Stack{Name: "b"}, &model.Stack{Name: "c"}
		for _, st := range []*model.Stack{a, b, c} {
			require.NoError(t, s.CreateStack(ctx, st))
		}
		ids, err := s.WatchedStacks(ctx)
		require.NoError(t, err)
		assert.Empty(t, ids)
		require.NoError(t, s.PutDriftSettings(ctx, a.ID, false, true))
		require.NoError(t, s.PutDriftSettings(ctx, b.ID, true, true))
		require.NoError(t, s.PutDriftSettings(ctx, c.ID, true, false))
		rec, err := s.GetDrift(ctx, b.ID)
		require.NoError(t, err)
		assert.True(t, rec.Watch)
		assert.True(t, rec.Repair)
		ids, err = s.WatchedStacks(ctx)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{a.ID, b.ID}, ids)

		require.NoError(t, s.PutDriftSettings(ctx, a.ID, false, false))
		require.NoError(t, s.DeleteStack(ctx, b.ID))
		ids, err = s.WatchedStacks(ctx)
		require.NoError(t, err)
		assert.Empty(t, ids, "a stack no longer watching or deleted is still listed")
	})
}

func TestSealerSealsDriftChecks(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		dbURL := be.fresh(t)
		plain := openTest(t, dbURL)
		s, err := WithSealer(plain, []byte("0123456789abcdef0123456789abcdef"))
		require.NoError(t, err)
		st := &model.Stack{Name: "d"}
		require.NoError(t, s.CreateStack(ctx, st))
		require.NoError(t, s.PutDriftSettings(ctx, st.ID, false, false))
		require.NoError(t, SaveDriftCheck(ctx, s, st.ID, driftCheckWithSecret()))

		rec, err := s.GetDrift(ctx, st.ID)
		require.NoError(t, err)
		last, err := rec.Check()
		require.NoError(t, err)
		require.NotNil(t, last)
		assert.Equal(t, "db-password=hunter2-diff", last.Resources[0].Changes[0].Old)

		var raw []byte
		require.NoError(t, be.raw(t, dbURL).QueryRow(`SELECT last_check FROM stack_drift`).Scan(&raw))
		assert.True(t, bytes.HasPrefix(raw, sealedPrefix), "the check is stored in clear: %q", raw)
		assert.NotContains(t, string(raw), "hunter2")
		under, err := plain.GetDrift(ctx, st.ID)
		require.NoError(t, err)
		assert.NotContains(t, string(under.LastCheck), "hunter2")
	})
}
