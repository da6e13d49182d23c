package starter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/platform"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// An http create whose worker is killed after the server made the object
// and before the worker heard back (so before anything was recorded) is
// retried by another worker, which finds the object the first attempt
// made instead of POSTing a second: the platform holds exactly one, and
// the stack records it.
func TestHTTPCreateCutOffByACrashLeavesOneObject(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	plat := platform.New()
	posted := make(chan struct{})
	release := make(chan struct{})
	var (
		once sync.Once
		mu   sync.Mutex
		keys []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v2/dashboards" {
			plat.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		first := false
		once.Do(func() { first = true })
		if !first {
			plat.ServeHTTP(w, r)
			return
		}
		// The object is made; the answer never reaches the worker.
		plat.ServeHTTP(httptest.NewRecorder(), r)
		close(posted)
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	docs := `apiVersion: cairn/v1
kind: http
metadata: {name: dash}
spec:
  url: ` + srv.URL + `
  path: /api/v2/dashboards
  body: {name: dash_1, description: made once}
`
	s := h.stack("http-crash")
	first := h.workerProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs)})
	require.NoError(t, err)
	select {
	case <-posted:
	case <-ctx.Done():
		t.Fatal("the create never reached the platform")
	}
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	require.Len(t, plat.Dashboards(), 1)

	h.workerProcess(t)
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	wantReport(t, done.Report, model.Report{Created: 1})

	dashes := plat.Dashboards()
	require.Len(t, dashes, 1, "the retried create made a second object: %v", dashes)
	rec := h.getStack(s.ID)
	require.Len(t, rec.Resources, 1)
	assert.Equal(t, dashes[0]["id"], rec.Resources[0].ID)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, keys)
	assert.NotEmpty(t, keys[0], "the create carried no Idempotency-Key")
	for _, k := range keys[1:] {
		assert.Equal(t, keys[0], k, "a retried create sent another key")
	}
}
