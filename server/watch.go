package server

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/starter"
)

// Defaults of WatchOptions.
const (
	// DefaultWatchMaxPaths bounds the resources one server watches: a
	// stack that would take it past the bound is not watched (its
	// schedule still checks it) and the log says so.
	DefaultWatchMaxPaths = 10000
	// DefaultWatchMaxNodePaths bounds, in the same way, the resources
	// one agent node watches (agentapi.MaxWatchPaths at most).
	DefaultWatchMaxNodePaths = agentapi.MaxWatchPaths
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
	MaxPaths     int
	MaxNodePaths int
	Debounce     time.Duration
	Resync       time.Duration
	// ControlRoot is the control plane's root (config CAIRN_CONTROL_ROOT)
	// and NodeRoot the directory of a local node.
	ControlRoot string
	NodeRoot    func(cluster, node string) string
	// SystemdAddress is the D-Bus address of the systemd manager whose
	// units service resources are (config CAIRN_SYSTEMD_ADDRESS; "": the
	// system manager).
	SystemdAddress string
	// DpkgStatus is dpkg's status file, which changes whenever a package
	// is installed, upgraded or removed (default DefaultDpkgStatus).
	DpkgStatus string
}

// DefaultDpkgStatus is where dpkg keeps what is installed.
const DefaultDpkgStatus = "/var/lib/dpkg/status"

// Watcher watches the resources of the stacks whose drift settings say
// watch, where they live: on this server (the control plane and local
// nodes) files and directories with inotify, packages through dpkg's
// status file and services through systemd's D-Bus signals; on agent
// nodes through their agents (NodeWatchList tells an agent what to
// watch, NodeWatchEvents takes what it saw). A change to one is debounced
// per stack and starts a drift check limited to the resources that
// changed (with repair, a repair of those alone, under the stack's lock).
// The stacks watched are the store's: read at start (so watchers outlive
// a restart), on Changed and every Resync; a stack newly armed has all
// its watched resources checked once, for what changed while no one
// watched. Memory: O(watched resources), at most MaxPaths here and
// MaxNodePaths per agent node; one inotify watch per distinct parent
// directory; one goroutine per watched stack, and one D-Bus connection
// while services are watched here.
type Watcher struct {
	st     WatchStore
	checks DriftChecks
	o      WatchOptions
	log    *slog.Logger
	nudges chan string

	// epoch tells this watcher's list versions from those of an earlier
	// process; stopped is closed when Run returns.
	epoch   string
	stopped chan struct{}

	mu     sync.Mutex
	stacks map[string]*watchedStack
	byPath map[string][]pathOwner
	dirs   dirWatches
	paths  int
	agents map[nodeRef]*agentWatch
	// byUnit indexes the service resources watched here by unit; while
	// there are any, a goroutine follows systemd's signals (stopUnits
	// stops it).
	byUnit    map[string][]pathOwner
	stopUnits context.CancelFunc
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
	if o.MaxNodePaths <= 0 || o.MaxNodePaths > agentapi.MaxWatchPaths {
		o.MaxNodePaths = DefaultWatchMaxNodePaths
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultWatchDebounce
	}
	if o.Resync <= 0 {
		o.Resync = DefaultWatchResync
	}
	if o.DpkgStatus == "" {
		o.DpkgStatus = DefaultDpkgStatus
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{st: st, checks: checks, o: o, log: log, nudges: make(chan string, 64),
		epoch: strconv.FormatInt(time.Now().UnixNano(), 36), stopped: make(chan struct{}),
		stacks: map[string]*watchedStack{}, byPath: map[string][]pathOwner{}, dirs: newDirWatches(nil),
		agents: map[nodeRef]*agentWatch{}, byUnit: map[string][]pathOwner{}}
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
	w.dirs.fs = fsw
	w.mu.Unlock()
	defer func() {
		close(w.stopped)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.stopUnits != nil {
			w.stopUnits()
		}
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

// all marks every resource watched here as changed.
func (w *Watcher) all() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.stacks {
		for _, t := range s.targets {
			if t.agent.node == "" {
				s.pending[t.key] = true
			}
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
