package activities

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// countedSteps is an agent's step data, counting the parameters it reads.
type countedSteps struct {
	StepData
	reads *atomic.Int32
}

func (c countedSteps) GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error) {
	if kind == contract.DataParams {
		c.reads.Add(1)
	}
	return c.StepData.GetStepData(ctx, execID, stepID, kind)
}

// An agent reads an execution's parameters once for all of its units, and
// an execution without parameters once as well.
func TestAgentReadsParamsOncePerExecution(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	given := model.ApplyParams{EnvRefs: map[string]string{"SITE": "prod"}, Vars: map[string]any{"n": "1"}, Verbose: true}
	raw, err := json.Marshal(given)
	require.NoError(t, err)
	require.NoError(t, st.PutStepData(ctx, "with", contract.ParamsKey, contract.DataParams, raw))

	var reads atomic.Int32
	a := New(Deps{Steps: countedSteps{StepData: st, reads: &reads}})
	for range 3 {
		got, err := a.unitParams(ctx, "with", nil)
		require.NoError(t, err)
		assert.Equal(t, given, got)
		got, err = a.unitParams(ctx, "without", nil)
		require.NoError(t, err)
		assert.True(t, got.Empty())
	}
	assert.Equal(t, int32(2), reads.Load(), "one read per execution")
}
