package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
)

// A snapshot hash in the input names content in the store, and only a
// package snapshot is planned as a package: a graph snapshot's hash is
// refused for good.
func TestPrepareRefusesASnapshotThatIsNotAPackage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	hash, err := f.st.PutSnapshot(ctx, "graph", []byte("kind: Graph\nmetadata: {type: default}\ntasks: []\n"))
	require.NoError(t, err)
	_, err = f.acts.Prepare(ctx, contract.PrepareInput{ExecutionID: "e1", Mode: contract.ModeApply, StackID: f.stack("").ID, SnapshotHash: hash})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, err.Error(), "not a package")
}
