package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// StepDataExecutions pages through the executions that have step data,
// each once whatever its number of rows, and forgets one whose data was
// deleted.
func TestStepDataExecutionsPages(t *testing.T) {
	eachBackend(t, func(t *testing.T, be testBackend) {
		ctx := context.Background()
		s := freshStore(t, be)
		for _, id := range []string{"c", "a", "b"} {
			require.NoError(t, s.PutStepDataBatch(ctx, id, "before", map[string][]byte{"s1": []byte("x"), "s2": []byte("y")}))
			require.NoError(t, s.PutStepData(ctx, id, "s1", "outputs", []byte("z")))
		}
		page, err := s.StepDataExecutions(ctx, "", 2)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, page)
		page, err = s.StepDataExecutions(ctx, "b", 2)
		require.NoError(t, err)
		require.Equal(t, []string{"c"}, page)

		require.NoError(t, s.DeleteStepData(ctx, "b"))
		page, err = s.StepDataExecutions(ctx, "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "c"}, page)
		_, err = s.StepDataExecutions(ctx, "", 0)
		require.Error(t, err)
	})
}
