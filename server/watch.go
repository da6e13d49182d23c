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

	"github.com/cairn-io/cairn/starter"
)

// Defaults of WatchOptions.
const (
	// DefaultWatchMaxPaths bounds the resources one server watches: a
	// stack that would take it past the bound is not watched (its
	// schedule still checks it) and the log says so.
	DefaultWatchMaxPaths = 10000
	// DefaultWatchDebounce is how long a watcher gathers changes of a
	// stack before it checks them: an editor's save or a tar extraction
	// is one check, not one per event.
	DefaultWatchDebounce = 50 * time.Millisecond
	// DefaultWatchResync is how often a watcher re-reads the watched
	// stacks from the store besides when the API says a stack's drift
	// settings changed: new resources after an apply, a stack deleted.
	DefaultWatchResync = 10 * time.Second
	// watchBusyPoll is how often a watcher asks whether an apply or
	// destroy of a stack still runs before checking it.
	watchBusyPoll = 100 * time.Millisecond
	// watchRetry is how long a watcher waits to start a check again
	// after Temporal refused one.
	watchRetry = time.Second
	// watchEvents is the kernel events a watcher buffers.
	watchEvents = 4096
)

// DriftChecks starts drift checks limited to resources (the starter).
type DriftChecks interface {
	StartDriftCheck(ctx context.Context, stackID string, resources []string) (*starter.DriftCheck, error)
	StackBusy(ctx context.Context, stackID string) (bool, error)
}

// WatchOptions are a Watcher's settings; zero values take the defaults.
type WatchOptions struct {
	MaxPaths int
	Debounce time.Duration
	Resync   time.Duration
	// ControlRoot is the control plane's root (config CAIRN_CONTROL_ROOT)
	// and NodeRoot the directory of a local node.
	ControlRoot string
	NodeRoot    func(cluster, node string) string
}

// Watcher watches the files and directories of the stacks whose drift
// settings say watch, where they live on this server (the control plane
// and local nodes), with inotify. A change to one is debounced per stack
// and starts a drift check limited to the resources that changed (with
// repair, a repair of those alone, under the stack's lock). The stacks
// watched are the store's: read at start (so watchers outlive a restart),
// on Changed and every Resync; a stack newly armed has all its watched
// resources checked once, for what changed while no one watched. Memory: O(watched paths), at most MaxPaths;
// one inotify watch per distinct parent directory; one goroutine per
// watched stack.
type Watcher struct {
	st     WatchStore
	checks DriftChecks
	o      WatchOptions
	log    *slog.Logger
	nudges chan string

	mu     sync.Mutex
	fs     *fsnotify.Watcher
	stacks map[string]*watchedStack
	byPath map[string][]pathOwner
	dirs   map[string]int // parent directory -> targets in it
	paths  int
}

// watchedStack is one watched stack: its targets, the keys of those that
// changed since its last check and the goroutine that checks them.
type watchedStack struct {
	id      string
	targets []watchTarget
	pending map[string]bool
	wake    chan struct{}
	stop    context.CancelFunc
}

// pathOwner is a watched path's stack and resource key.
type pathOwner struct {
	stack *watchedStack
	key   string
}

// NewWatcher makes a watcher; Run starts it.
func NewWatcher(st WatchStore, checks DriftChecks, o WatchOptions, log *slog.Logger) *Watcher {
	if o.MaxPaths <= 0 {
		o.MaxPaths = DefaultWatchMaxPaths
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultWatchDebounce
	}
	if o.Resync <= 0 {
		o.Resync = DefaultWatchResync
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{st: st, checks: checks, o: o, log: log, nudges: make(chan string, 64),
		stacks: map[string]*watchedStack{}, byPath: map[string][]pathOwner{}, dirs: map[string]int{}}
}

// Changed tells the watcher a stack's drift settings changed or went; it
// re-reads them soon. It never blocks: when many arrive at once the next
// resync reads the rest.
func (w *Watcher) Changed(stackID string) {
	select {
	case w.nudges <- stackID:
	default:
	}
}

// Watched says how many paths the watcher watches now.
func (w *Watcher) Watched() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.paths
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	fsw, err := fsnotify.NewBufferedWatcher(watchEvents)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.fs = fsw
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, s := range w.stacks {
			s.stop()
		}
		_ = fsw.Close()
	}()
	w.resyncAll(ctx)
	tick := time.NewTicker(w.o.Resync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return nil
			}
			w.event(ev.Name)
		case err, ok := <-fsw.Errors:
			if !ok {
				return nil
			}
			w.log.Warn("watch", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.all() // events were lost: check everything watched
			}
		case id := <-w.nudges:
			w.resync(ctx, id)
		case <-tick.C:
			w.resyncAll(ctx)
		}
	}
}

// event marks the resources at path as changed and wakes their stacks.
func (w *Watcher) event(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.byPath[path] {
		o.stack.pending[o.key] = true
		o.stack.signal()
	}
}

// all marks every watched resource as changed.
func (w *Watcher) all() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.stacks {
		for _, t := range s.targets {
			s.pending[t.key] = true
		}
		s.signal()
	}
}

func (s *watchedStack) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// resyncAll re-reads every watched stack, and stops watching those the
// store no longer lists.
func (w *Watcher) resyncAll(ctx context.Context) {
	ids, err := w.st.WatchedStacks(ctx)
	if err != nil {
		w.log.Warn("watch: list watched stacks", "err", err)
		return
	}
	w.mu.Lock()
	var gone []string
	for id := range w.stacks {
		if !slices.Contains(ids, id) {
			gone = append(gone, id)
		}
	}
	w.mu.Unlock()
	for _, id := range append(gone, ids...) {
		w.resync(ctx, id)
	}
}

// resync re-reads one stack's watched resources and watches them, or
// stops watching the stack when its setting or the stack went.
func (w *Watcher) resync(ctx context.Context, id string) {
	targets, skipped, ok, err := stackTargets(ctx, w.st, w.o.ControlRoot, w.o.NodeRoot, id)
	if err != nil {
		w.log.Warn("watch: read stack", "stack", id, "err", err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stacks[id]
	var old []watchTarget
	if s != nil {
		old = s.targets
	}
	drop := func() {
		if s != nil {
			w.unwatch(s, old)
			s.stop()
			delete(w.stacks, id)
		}
	}
	if !ok || len(targets) == 0 {
		drop()
		if s != nil {
			w.log.Info("watch: stack no longer watched", "stack", id)
		}
		return
	}
	if w.paths-len(old)+len(targets) > w.o.MaxPaths {
		drop()
		w.log.Warn("watch: stack not watched: too many paths", "stack", id, "paths", len(targets), "watched", w.paths, "max", w.o.MaxPaths)
		return
	}
	if s == nil {
		sctx, stop := context.WithCancel(ctx)
		s = &watchedStack{id: id, pending: map[string]bool{}, wake: make(chan struct{}, 1), stop: stop}
		w.stacks[id] = s
		go w.checkLoop(sctx, s)
		w.log.Info("watch: stack watched", "stack", id, "paths", len(targets), "agentPaths", skipped)
	}
	w.watch(s, targets)
	w.unwatch(s, old)
	s.targets = targets
	if old == nil {
		// Newly armed (at start, or watching just asked for): what
		// changed while no one watched is checked now.
		for _, t := range targets {
			s.pending[t.key] = true
		}
		s.signal()
	}
}

// watch adds targets of s to the path index and the kernel's watches (on
// each target's directory: a file deleted and written anew, or renamed
// into place, stays seen). Under w.mu.
func (w *Watcher) watch(s *watchedStack, targets []watchTarget) {
	added := map[string]bool{}
	for _, t := range targets {
		w.byPath[t.path] = append(w.byPath[t.path], pathOwner{stack: s, key: t.key})
		dir := filepath.Dir(t.path)
		if !added[dir] {
			// Adding a watched directory again is harmless and re-arms a
			// directory that was removed and made again.
			added[dir] = true
			if err := w.fs.Add(dir); err != nil {
				w.log.Warn("watch: directory", "stack", s.id, "dir", dir, "err", err)
			}
		}
		w.dirs[dir]++
	}
	w.paths += len(targets)
}

// unwatch removes targets of s from the index, one entry each (the
// oldest: a resync adds the new ones before it drops the old), and drops
// the kernel's watches no one needs any more. Under w.mu.
func (w *Watcher) unwatch(s *watchedStack, targets []watchTarget) {
	for _, t := range targets {
		owners := w.byPath[t.path]
		if i := slices.Index(owners, pathOwner{stack: s, key: t.key}); i >= 0 {
			owners = slices.Delete(owners, i, i+1)
		}
		if len(owners) == 0 {
			delete(w.byPath, t.path)
		} else {
			w.byPath[t.path] = owners
		}
		dir := filepath.Dir(t.path)
		if w.dirs[dir]--; w.dirs[dir] <= 0 {
			delete(w.dirs, dir)
			_ = w.fs.Remove(dir)
		}
	}
	w.paths -= len(targets)
}

// take returns and clears the keys of s's changed resources, sorted.
func (w *Watcher) take(s *watchedStack) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(s.pending))
	for k := range s.pending {
		keys = append(keys, k)
	}
	clear(s.pending)
	slices.Sort(keys)
	return keys
}

// requeue marks keys of s as changed again and wakes s's loop.
func (w *Watcher) requeue(s *watchedStack, keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		s.pending[k] = true
	}
	s.signal()
}

// checkLoop checks s's changed resources, one check at a time: changes
// arriving during a check are checked next. It waits for an apply or
// destroy of the stack to end first (its changes are the stack's own, and
// a repair would be skipped while it holds the lock).
func (w *Watcher) checkLoop(ctx context.Context, s *watchedStack) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		if !sleep(ctx, w.o.Debounce) || !w.waitIdle(ctx, s.id) {
			return
		}
		keys := w.take(s)
		if len(keys) == 0 {
			continue
		}
		t0 := time.Now()
		chk, err := w.checks.StartDriftCheck(ctx, s.id, keys)
		if err != nil {
			// Temporal is away: the changes wait for the next try.
			w.log.Warn("watch: start drift check", "stack", s.id, "err", err)
			w.requeue(s, keys)
			if !sleep(ctx, watchRetry) {
				return
			}
			continue
		}
		res, err := chk.Wait(ctx)
		if err != nil {
			w.log.Warn("watch: drift check", "stack", s.id, "check", chk.WorkflowID, "err", err)
			continue
		}
		args := []any{"stack", s.id, "check", chk.WorkflowID, "resources", len(keys), "drifted", res.Drifted, "took", time.Since(t0)}
		if res.Repair != nil {
			args = append(args, "repair", res.Repair.Status)
		}
		w.log.Info("watch: checked", args...)
	}
}

// waitIdle waits while an apply or destroy of the stack runs; false when
// ctx ended.
func (w *Watcher) waitIdle(ctx context.Context, stackID string) bool {
	for waited := false; ; waited = true {
		busy, err := w.checks.StackBusy(ctx, stackID)
		if err != nil {
			w.log.Warn("watch: stack lock", "stack", stackID, "err", err)
		}
		if err != nil || !busy {
			return ctx.Err() == nil
		}
		if !waited {
			w.log.Info("watch: waiting for the stack's apply or destroy to end", "stack", stackID)
		}
		if !sleep(ctx, watchBusyPoll) {
			return false
		}
	}
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
