package server

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/providers"
)

// Timings of an agent's watcher.
const (
	// agentWatchFlush is how long an agent gathers changes before it
	// reports them, and the least time between two reports: however
	// fast a node's files change, the server hears of them at most this
	// often, each path once.
	agentWatchFlush = 50 * time.Millisecond
	// agentWatchRetry is how long an agent waits to ask for its list,
	// or report changes, again after the server could not be reached.
	agentWatchRetry = time.Second
)

// watchAPI is what an agent's watcher needs of the agent API.
type watchAPI interface {
	WatchList(ctx context.Context, since string) (*agentapi.WatchList, error)
	ReportWatchEvents(ctx context.Context, ev agentapi.WatchEvents) error
}

// agentWatcher watches, on an agent's node, the paths the server lists
// for it (agentapi.PathWatch), with inotify on their directories as the
// server's Watcher does, and reports those that change
// (agentapi.PathWatchEvents), gathered per agentWatchFlush. It asks for
// its list anew whenever the server could not be reached, so an agent
// that reconnects, or a server that restarted, has the current list.
// Memory: O(watched paths), at most agentapi.MaxWatchPaths.
type agentWatcher struct {
	api  watchAPI
	root string
	log  *slog.Logger

	mu      sync.Mutex
	dirs    dirWatches
	byHost  map[string]string // path on the host -> path as listed
	pending map[string]bool
	over    bool
	wake    chan struct{}
}

// runAgentWatch watches the node's listed paths under root until ctx
// ends.
func runAgentWatch(ctx context.Context, api watchAPI, root string, log *slog.Logger) error {
	fsw, err := fsnotify.NewBufferedWatcher(watchEvents)
	if err != nil {
		return err
	}
	defer fsw.Close()
	a := &agentWatcher{api: api, root: root, log: log, dirs: newDirWatches(fsw),
		byHost: map[string]string{}, pending: map[string]bool{}, wake: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { a.follow(ctx) })
	wg.Go(func() { a.report(ctx) })
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return nil
			}
			a.event(ev.Name)
		case err, ok := <-fsw.Errors:
			if !ok {
				return nil
			}
			log.Warn("watch", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				a.mu.Lock()
				a.over = true
				a.mu.Unlock()
				a.signal()
			}
		}
	}
}

// event marks a watched path as changed.
func (a *agentWatcher) event(host string) {
	a.mu.Lock()
	p, ok := a.byHost[host]
	if ok {
		a.pending[p] = true
	}
	a.mu.Unlock()
	if ok {
		a.signal()
	}
}

func (a *agentWatcher) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// follow keeps the watched paths the server's list, asking again as soon
// as the answer comes (the server holds the request until the list
// changes).
func (a *agentWatcher) follow(ctx context.Context) {
	since := ""
	for ctx.Err() == nil {
		l, err := a.api.WatchList(ctx, since)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("watch: ask the server what to watch", "err", err)
			}
			since = "" // whoever answers next says the whole list
			if !sleep(ctx, agentWatchRetry) {
				return
			}
			continue
		}
		if l.Version != since {
			a.set(l.Paths)
			since = l.Version
		}
	}
}

// set watches paths (as listed: each resolved in the node's root) and
// stops watching the others.
func (a *agentWatcher) set(paths []string) {
	node := providers.Node{Root: a.root}
	want := make(map[string]string, len(paths))
	for _, p := range paths {
		host, err := node.Resolve(p)
		if err != nil {
			a.log.Warn("watch: path not watched", "path", p, "err", err)
			continue
		}
		want[host] = p
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	added := map[string]bool{}
	for host, p := range want {
		if _, ok := a.byHost[host]; ok {
			continue
		}
		a.byHost[host] = p
		dir := filepath.Dir(host)
		if err := a.dirs.add(host, !added[dir]); err != nil {
			a.log.Warn("watch: directory", "path", p, "err", err)
		}
		added[dir] = true
	}
	for host, p := range a.byHost {
		if _, ok := want[host]; !ok {
			delete(a.byHost, host)
			delete(a.pending, p)
			a.dirs.remove(host)
		}
	}
	a.log.Info("watch: watching", "paths", len(a.byHost))
}

// report sends what changed, at most once per agentWatchFlush; what a
// report that failed carried is sent with the next one.
func (a *agentWatcher) report(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		if !sleep(ctx, agentWatchFlush) {
			return
		}
		a.mu.Lock()
		ev := agentapi.WatchEvents{Overflow: a.over}
		for p := range a.pending {
			ev.Paths = append(ev.Paths, p)
		}
		clear(a.pending)
		a.over = false
		a.mu.Unlock()
		if ev.Overflow {
			ev.Paths = nil
		}
		if len(ev.Paths) == 0 && !ev.Overflow {
			continue
		}
		slices.Sort(ev.Paths)
		if err := a.api.ReportWatchEvents(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn("watch: report changes", "paths", len(ev.Paths), "err", err)
			a.requeue(ev)
			if !sleep(ctx, agentWatchRetry) {
				return
			}
		}
	}
}

// requeue marks ev's changes as pending again (those still watched).
func (a *agentWatcher) requeue(ev agentapi.WatchEvents) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.over = a.over || ev.Overflow
	watched := map[string]bool{}
	for _, p := range a.byHost {
		watched[p] = true
	}
	for _, p := range ev.Paths {
		if watched[p] {
			a.pending[p] = true
		}
	}
	a.signal()
}

// goWatch runs runAgentWatch in a goroutine; the returned func stops it
// and waits for it to end.
func goWatch(ctx context.Context, api watchAPI, root string, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runAgentWatch(ctx, api, root, log); err != nil {
			log.Error("watch: not watching this node", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}
