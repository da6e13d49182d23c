package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/server"
)

// driftEvents records the drift.detected events a stack's hook receives,
// with when each arrived.
type driftEvents struct {
	mu  sync.Mutex
	got []driftEvent
}

type driftEvent struct {
	at      time.Time
	drifted []string
}

func (d *driftEvents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev model.HookEvent
	if json.Unmarshal(body, &ev) == nil && ev.Type == model.EventDriftDetected {
		d.mu.Lock()
		d.got = append(d.got, driftEvent{at: time.Now(), drifted: ev.Drifted})
		d.mu.Unlock()
	}
}

// reported is when a drift.detected event naming resource name arrived
// after t0 (zero before one did).
func (d *driftEvents) reported(name string, t0 time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ev := range d.got {
		if ev.at.After(t0) && slices.ContainsFunc(ev.drifted, func(id string) bool { return strings.HasSuffix(id, "/"+name) }) {
			return ev.at
		}
	}
	return time.Time{}
}

// runServer serves Cairn on dataDir until the returned stop is called.
func runServer(t *testing.T, temporal, dataDir string) (addr string, stop func()) {
	t.Helper()
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{
			"CAIRN_TEMPORAL_ADDRESS":    temporal,
			"CAIRN_DATA_DIR":            dataDir,
			"CAIRN_API_ADDR":            "127.0.0.1:0",
			"CAIRN_API_TOKEN":           "t0ken",
			"CAIRN_TASK_QUEUE":          "watch-test",
			"CAIRN_HOOKS_ALLOW_PRIVATE": "true",
		}[k]
	}))
	require.NoError(t, err)
	return serve(t, cfg)
}

// serve runs `cairn server` with cfg until the returned stop is called
// (it may be called again: the second call does nothing), and returns its
// API's address.
func serve(t *testing.T, cfg *config.Config) (addr string, stop func()) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, log, server.Options{API: true, Ready: func(addr string) { ready <- addr }})
	}()
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("server not ready")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err, "Run")
			case <-time.After(60 * time.Second):
				t.Fatal("server did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return addr, stop
}

// watchedFile is one of the stack's files and what Cairn declares of it.
type watchedFile struct {
	name, path, content string
}

// intact says the file is as declared: its content and mode 0644.
func (f watchedFile) intact() bool {
	b, err := os.ReadFile(f.path)
	if err != nil || string(b) != f.content {
		return false
	}
	fi, err := os.Stat(f.path)
	return err == nil && fi.Mode().Perm() == 0o644
}

// A watched stack of 1,000 files: each file changed behind Cairn's back
// (its content rewritten, the file deleted, its mode changed) is
// reported to the stack's hook and repaired, with no schedule due; the
// latencies over 20 changes are logged (docs/performance.md). Watching
// survives a restart of the server, and stops when the drift settings go.
func TestWatchReportsAndRepairsChangedFiles(t *testing.T) {
	dev := testenv.Temporal(t)
	outer := t
	dataDir, root := t.TempDir(), t.TempDir()
	addr, stop := runServer(t, dev.HostPort, dataDir)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c, err := client.New("http://"+addr, "t0ken")
	require.NoError(t, err)

	hook := &driftEvents{}
	hooks := httptest.NewServer(hook)
	t.Cleanup(hooks.Close)
	st, err := c.CreateStack(ctx, model.StackInput{Name: "watched"})
	require.NoError(t, err)
	_, err = c.PutHooks(ctx, st.ID, []model.Hook{{URL: hooks.URL, Events: []string{model.EventDriftDetected}}})
	require.NoError(t, err)

	const n = 1000
	files := make([]watchedFile, n)
	var pkg strings.Builder
	for i := range files {
		f := watchedFile{name: fmt.Sprintf("f%04d", i), path: filepath.Join(root, fmt.Sprintf("f%04d.conf", i)), content: fmt.Sprintf("setting %d\n", i)}
		files[i] = f
		fmt.Fprintf(&pkg, "---\nkind: File\nmetadata: {name: %s}\nspec: {path: %q, content: %q, mode: \"0644\"}\n", f.name, f.path, f.content)
	}
	ex, err := c.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg.String()), Format: "yaml"}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, ex.Status, "apply: %s", ex.Error)
	require.True(t, files[n-1].intact())

	d, err := c.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h", Repair: true, Watch: true})
	require.NoError(t, err)
	assert.True(t, d.Watch)
	got, err := c.GetDrift(ctx, st.ID)
	require.NoError(t, err)
	assert.True(t, got.Watch, "GET shows the watch setting")

	changes := []struct {
		name   string
		change func(f watchedFile) error
	}{
		{"content", func(f watchedFile) error { return os.WriteFile(f.path, []byte("changed by hand\n"), 0o644) }},
		{"delete", func(f watchedFile) error { return os.Remove(f.path) }},
		{"mode", func(f watchedFile) error { return os.Chmod(f.path, 0o600) }},
	}
	// change changes f, then waits for it to be reported and repaired and
	// returns how long each took.
	change := func(t *testing.T, f watchedFile, how int) (reported, repaired time.Duration) {
		t.Helper()
		t0 := time.Now()
		require.NoError(t, changes[how].change(f))
		var rep, fixed time.Time
		deadline := t0.Add(2 * time.Minute)
		for (rep.IsZero() || fixed.IsZero()) && time.Now().Before(deadline) {
			if rep.IsZero() {
				rep = hook.reported(f.name, t0)
			}
			if fixed.IsZero() && f.intact() {
				fixed = time.Now()
			}
			time.Sleep(2 * time.Millisecond)
		}
		require.False(t, rep.IsZero() || fixed.IsZero(), "%s of %s: reported %v, repaired %v", changes[how].name, f.name, !rep.IsZero(), !fixed.IsZero())
		return rep.Sub(t0), fixed.Sub(t0)
	}

	// The first change warms the workers' caches up; it is not measured.
	change(t, files[n-1], 0)
	var reported, repaired []time.Duration
	for i := range 20 {
		f := files[(i*97)%(n-1)]
		rep, fix := change(t, f, i%len(changes))
		t.Logf("change %2d (%-7s of %s): reported in %v, repaired in %v", i+1, changes[i%len(changes)].name, f.name, rep.Round(time.Millisecond), fix.Round(time.Millisecond))
		reported, repaired = append(reported, rep), append(repaired, fix)
	}
	slices.Sort(reported)
	slices.Sort(repaired)
	at := func(d []time.Duration, pct int) time.Duration { return d[(len(d)-1)*pct/100].Round(time.Millisecond) }
	t.Logf("over %d changes of a stack of %d files: reported median %v, p90 %v, max %v; repaired median %v, p90 %v, max %v", len(reported), n,
		at(reported, 50), at(reported, 90), at(reported, 100), at(repaired, 50), at(repaired, 90), at(repaired, 100))
	for _, f := range files {
		require.True(t, f.intact(), "%s left changed", f.name)
	}

	t.Run("watching survives a restart of the server", func(t *testing.T) {
		// Stopped while quiet: the check of the last repair's own writes
		// has found nothing (a repair cut off by the stop would hold the
		// stack's lock until its step timed out).
		require.Eventually(t, func() bool {
			d, err := c.GetDrift(ctx, st.ID)
			return err == nil && d.LastCheck != nil && !d.LastCheck.Drifted
		}, time.Minute, 10*time.Millisecond)
		stop()
		addr, _ := runServer(outer, dev.HostPort, dataDir)
		c, err = client.New("http://"+addr, "t0ken")
		require.NoError(t, err)
		change(t, files[500], 1)
	})

	t.Run("watching stops with the drift settings", func(t *testing.T) {
		require.NoError(t, c.DeleteDrift(ctx, st.ID))
		f := files[501]
		require.NoError(t, os.WriteFile(f.path, []byte("mine now\n"), 0o600))
		// No check is due: a repair would come within the goal of 2s.
		time.Sleep(5 * time.Second)
		b, err := os.ReadFile(f.path)
		require.NoError(t, err)
		assert.Equal(t, "mine now\n", string(b), "a file of a stack no longer watched was repaired")
		_, err = os.Stat(f.path)
		assert.False(t, os.IsNotExist(err))
	})
}
