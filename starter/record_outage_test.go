package starter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// outage is a store whose stack record writes fail until a moment: the
// database is down for a while.
type outage struct {
	store.Store
	until time.Time

	mu       sync.Mutex
	failures int
	landed   time.Time
}

func (o *outage) WriteStackRecord(ctx context.Context, stackID, execID string, resources []model.StackResource, hash, clusterID string, changed bool) (*model.Stack, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if time.Now().Before(o.until) {
		o.failures++
		return nil, errors.New("dial tcp 127.0.0.1:5432: connection refused")
	}
	st, err := o.Store.WriteStackRecord(ctx, stackID, execID, resources, hash, clusterID, changed)
	if err == nil && o.landed.IsZero() {
		o.landed = time.Now()
	}
	return st, err
}

// An apply whose stack record cannot be written for a minute (more
// attempts than the other bookkeeping activities get) keeps retrying the
// write: the record lands once the store is back and the apply completes.
func TestStackRecordWriteOutlastsAStoreOutage(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	down := &outage{Store: h.store, until: time.Now().Add(time.Minute)}
	w, err := worker.New(h.dev.Client, worker.Deps{Store: down, Logger: testLogger()}, worker.Options{TaskQueue: h.queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	root := t.TempDir()
	s := h.stack("outage")
	docs := "apiVersion: cairn/v1\nkind: File\nmetadata: {name: motd}\nspec: {path: " + filepath.Join(root, "motd") + ", content: hello}\n"
	done := h.applyWithin(s.ID, docs, 3*time.Minute)
	mustStatus(t, done, model.ExecCompleted)
	wantReport(t, done.Report, model.Report{Created: 1})

	down.mu.Lock()
	failures, landed := down.failures, down.landed
	down.mu.Unlock()
	assert.Greater(t, failures, 5, "the write gave up as early as a five-attempt policy would")
	assert.False(t, landed.Before(down.until), "the record landed during the outage")
	rec := h.getStack(s.ID)
	require.Len(t, rec.Resources, 1)
	assert.Equal(t, "motd", rec.Resources[0].PkgName)
	assert.NotEmpty(t, rec.SnapshotHash)
	b, err := os.ReadFile(filepath.Join(root, "motd"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
}
