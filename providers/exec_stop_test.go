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

// A command killed because its context was cancelled says why: the
// cancellation's cause is in its error, so the caller tells a stopping
// worker from the command's own failure.
func TestExecKilledByCancellationCarriesTheCause(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	stopping := errors.New("the worker stops")
	ctx, cancel := context.WithCancelCause(context.Background())
	started := filepath.Join(t.TempDir(), "started")
	done := make(chan error, 1)
	go func() {
		_, err := r.Converge(ctx, Request{Kind: "exec", Name: "x", Node: node,
			Spec: model.Spec{"command": "touch " + started + "; sleep 60"}})
		done <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 10*time.Second, 10*time.Millisecond)
	cancel(stopping)
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cancellation did not stop the command")
	}
	require.Error(t, err)
	assert.ErrorIs(t, err, stopping)
	assert.False(t, IsConfigError(err))
	assert.Contains(t, err.Error(), "killed")
}
