package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/agentapi"
)

// watchPeer is the agent API's watch routes as a server answers them:
// the list it is given (held while the agent's version is current) and
// the reports it receives.
type watchPeer struct {
	mu      sync.Mutex
	list    agentapi.WatchList
	changed chan struct{}
	reports []agentapi.WatchEvents
	asked   int
}

func (p *watchPeer) setList(version string, paths ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = agentapi.WatchList{Version: version, Paths: paths}
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *watchPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case agentapi.PathWatch:
		p.mu.Lock()
		p.asked++
		l, ch := p.list, p.changed
		p.mu.Unlock()
		if r.URL.Query().Get("since") == l.Version {
			select {
			case <-ch:
			case <-r.Context().Done():
				return
			case <-time.After(agentapi.WatchWait):
			}
			p.mu.Lock()
			l = p.list
			p.mu.Unlock()
		}
		_ = json.NewEncoder(w).Encode(l)
	case agentapi.PathWatchEvents:
		var ev agentapi.WatchEvents
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.reports = append(p.reports, ev)
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// seen is every path reported so far, and the reports.
func (p *watchPeer) seen() (map[string]int, []agentapi.WatchEvents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for _, ev := range p.reports {
		for _, path := range ev.Paths {
			out[path]++
		}
	}
	return out, slices.Clone(p.reports)
}

func (p *watchPeer) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reports = nil
}

// An agent's watcher watches the paths its server lists, in its node's
// root, and reports those that change: a burst of writes is gathered
// into few reports naming each path once, paths not listed (or leaving
// the root) are never reported, and a new list replaces the old one.
func TestAgentWatcherReportsListedPathsCoalesced(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	for _, f := range []string{"a.conf", "b.conf", "c.conf", "other.conf"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", f), []byte("x"), 0o644))
	}
	peer := &watchPeer{changed: make(chan struct{})}
	peer.setList("v1", "/etc/a.conf", "/etc/b.conf", "/etc/c.conf", "../outside.conf")
	srv := httptest.NewServer(peer)
	t.Cleanup(srv.Close)
	token, err := agentapi.NewToken("c1", "n1")
	require.NoError(t, err)
	api, err := agentapi.NewClient(srv.URL, token, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runAgentWatch(ctx, api, root, "", slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})

	// The list is watched once the agent asks again with its version.
	require.Eventually(t, func() bool {
		peer.mu.Lock()
		defer peer.mu.Unlock()
		return peer.asked >= 2
	}, time.Minute, 5*time.Millisecond)

	const writes = 300
	for i := range writes {
		name := []string{"a.conf", "b.conf", "c.conf", "other.conf"}[i%4]
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", name), []byte{byte(i)}, 0o644))
	}
	require.Eventually(t, func() bool {
		got, _ := peer.seen()
		return got["/etc/a.conf"] > 0 && got["/etc/b.conf"] > 0 && got["/etc/c.conf"] > 0
	}, time.Minute, 5*time.Millisecond, "every listed path written is reported")
	got, reports := peer.seen()
	assert.NotContains(t, got, "/etc/other.conf", "a path not listed")
	assert.NotContains(t, got, "../outside.conf")
	assert.Less(t, len(reports), writes/4, "the writes are gathered into few reports")
	for _, ev := range reports {
		assert.True(t, slices.IsSorted(ev.Paths), "%v", ev.Paths)
		assert.Len(t, slices.Compact(slices.Clone(ev.Paths)), len(ev.Paths), "a path named twice in one report")
	}

	t.Run("a new list replaces the old", func(t *testing.T) {
		peer.setList("v2", "/etc/other.conf")
		require.Eventually(t, func() bool {
			peer.mu.Lock()
			defer peer.mu.Unlock()
			return peer.asked >= 3
		}, time.Minute, 5*time.Millisecond)
		// Asked again with v2: the new list is in place. Reports come one
		// at a time, so once one names other.conf, those after it were
		// gathered under the new list.
		otherReported := func() bool {
			got, _ := peer.seen()
			return got["/etc/other.conf"] > 0
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "other.conf"), []byte("first"), 0o644))
		require.Eventually(t, otherReported, time.Minute, 5*time.Millisecond)
		peer.reset()
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "a.conf"), []byte("again"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "other.conf"), []byte("again"), 0o644))
		require.Eventually(t, otherReported, time.Minute, 5*time.Millisecond)
		got, _ := peer.seen()
		assert.NotContains(t, got, "/etc/a.conf", "a path no longer listed")
	})
}
