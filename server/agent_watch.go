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

// agentWatcher watches, on an agent's node, what the server lists for it
// (agentapi.PathWatch): paths with inotify on their directories as the
// server's Watcher does, units on systemd's D-Bus signals (the manager
// at address, as the agent's service kind drives), and reports those
// that change (agentapi.PathWatchEvents), gathered per agentWatchFlush.
// It asks for its list anew whenever the server could not be reached, so
// an agent that reconnects, or a server that restarted, has the current
// list. Memory: O(watched entries), at most agentapi.MaxWatchPaths.
type agentWatcher struct {
	api     watchAPI
	root    string
	address string
	log     *slog.Logger

	mu      sync.Mutex
	dirs    dirWatches
	byHost  map[string]string // path on the host -> path as listed
	units   map[string]bool
	pending map[string]bool // paths as listed
	unitsCh map[string]bool // units changed
	over    bool
	wake    chan struct{}
	// stopUnits stops following systemd's signals (nil: not following).
	stopUnits context.CancelFunc
}

// runAgentWatch watches the node's listed paths under root, and its
// listed units on the systemd manager at address, until ctx ends.
func runAgentWatch(ctx context.Context, api watchAPI, root, address string, log *slog.Logger) error {
	fsw, err := fsnotify.NewBufferedWatcher(watchEvents)
	if err != nil {
		return err
	}
	defer fsw.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &agentWatcher{api: api, root: root, address: address, log: log, dirs: newDirWatches(fsw),
		byHost: map[string]string{}, units: map[string]bool{}, pending: map[string]bool{}, unitsCh: map[string]bool{},
		wake: make(chan struct{}, 1)}
	defer func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.stopUnits != nil {
			a.stopUnits()
		}
	}()
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
				a.lost()
			}
		}
	}
}

// lost says events were dropped: everything watched may have changed.
func (a *agentWatcher) lost() {
	a.mu.Lock()
	a.over = true
	a.mu.Unlock()
	a.signal()
}

// unitChanged marks a watched unit as changed.
func (a *agentWatcher) unitChanged(unit string) {
	a.mu.Lock()
	ok := a.units[unit]
	if ok {
		a.unitsCh[unit] = true
	}
	a.mu.Unlock()
	if ok {
		a.signal()
	}
}

// followUnits follows systemd's signals while units are listed, and
// stops when none are (or ctx ends); a connection that fails is made
// again, and what changed meanwhile is reported as lost. Under a.mu.
func (a *agentWatcher) followUnits(ctx context.Context) {
	switch {
	case len(a.units) > 0 && a.stopUnits == nil:
		ctx, stop := context.WithCancel(ctx)
		a.stopUnits = stop
		go followUnitsOf(ctx, a.address, a.unitChanged, a.lost, a.log)
	case len(a.units) == 0 && a.stopUnits != nil:
		a.stopUnits()
		a.stopUnits = nil
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
			a.set(ctx, l)
			since = l.Version
		}
	}
}

// set watches what l lists (its paths each resolved in the node's root,
// its host paths as they are, its units) and stops watching the rest.
func (a *agentWatcher) set(ctx context.Context, l *agentapi.WatchList) {
	node := providers.Node{Root: a.root}
	want := make(map[string]string, len(l.Paths)+len(l.Host))
	for _, p := range l.Paths {
		host, err := node.Resolve(p)
		if err != nil {
			a.log.Warn("watch: path not watched", "path", p, "err", err)
			continue
		}
		want[host] = p
	}
	for _, p := range l.Host {
		if !filepath.IsAbs(p) {
			a.log.Warn("watch: host path not absolute: not watched", "path", p)
			continue
		}
		want[filepath.Clean(p)] = p
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
	clear(a.units)
	for _, u := range l.Units {
		a.units[u] = true
	}
	for u := range a.unitsCh {
		if !a.units[u] {
			delete(a.unitsCh, u)
		}
	}
	a.followUnits(ctx)
	a.log.Info("watch: watching", "paths", len(a.byHost), "units", len(a.units))
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
		for u := range a.unitsCh {
			ev.Units = append(ev.Units, u)
		}
		clear(a.pending)
		clear(a.unitsCh)
		a.over = false
		a.mu.Unlock()
		if ev.Overflow {
			ev.Paths, ev.Units = nil, nil
		}
		if len(ev.Paths) == 0 && len(ev.Units) == 0 && !ev.Overflow {
			continue
		}
		slices.Sort(ev.Paths)
		slices.Sort(ev.Units)
		if err := a.api.ReportWatchEvents(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn("watch: report changes", "paths", len(ev.Paths), "units", len(ev.Units), "err", err)
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
	for _, u := range ev.Units {
		if a.units[u] {
			a.unitsCh[u] = true
		}
	}
	a.signal()
}

// goWatch runs runAgentWatch in a goroutine; the returned func stops it
// and waits for it to end.
func goWatch(ctx context.Context, api watchAPI, root, address string, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runAgentWatch(ctx, api, root, address, log); err != nil {
			log.Error("watch: not watching this node", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}
