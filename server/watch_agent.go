package server

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/cairn-io/cairn/internal/agentapi"
)

// agentWatch is what one agent node watches for this server's watched
// stacks: its paths (as the resources declare them) and their owners,
// and the list's version, bumped when a path comes or goes; changed is
// closed then (and replaced) to wake the node's agent waiting for it.
type agentWatch struct {
	byPath  map[string][]pathOwner
	paths   int
	version uint64
	changed chan struct{}
}

// agentNode is the node's entry, made when first asked for. Entries stay
// for the watcher's life: one per agent node that asked or has watched
// resources. Under w.mu.
func (w *Watcher) agentNode(ref nodeRef) *agentWatch {
	a := w.agents[ref]
	if a == nil {
		a = &agentWatch{byPath: map[string][]pathOwner{}, changed: make(chan struct{})}
		w.agents[ref] = a
	}
	return a
}

func (a *agentWatch) add(path string, o pathOwner) {
	if len(a.byPath[path]) == 0 {
		a.bump()
	}
	a.byPath[path] = append(a.byPath[path], o)
	a.paths++
}

func (a *agentWatch) remove(path string, o pathOwner) {
	owners := a.byPath[path]
	if i := slices.Index(owners, o); i >= 0 {
		owners = slices.Delete(owners, i, i+1)
	}
	if len(owners) == 0 {
		delete(a.byPath, path)
		a.bump()
	} else {
		a.byPath[path] = owners
	}
	a.paths--
}

// bump makes a new version of the list and wakes those waiting for one.
func (a *agentWatch) bump() {
	a.version++
	close(a.changed)
	a.changed = make(chan struct{})
}

// list is the node's WatchList. Cost: O(n log n) in its paths.
func (w *Watcher) list(a *agentWatch) *agentapi.WatchList {
	return &agentapi.WatchList{
		Version: w.epoch + "." + strconv.FormatUint(a.version, 10),
		Paths:   slices.Sorted(maps.Keys(a.byPath)),
	}
}

// NodeWatchList answers the paths the agent of node (of cluster) is to
// watch. When since is the current version it waits up to
// agentapi.WatchWait for a change first (or until ctx ends or the
// watcher stops), so an agent learns of a new list at once while holding
// one request open. A version of an earlier server process is never
// current: an agent that reconnects to a restarted server gets the list
// at once.
func (w *Watcher) NodeWatchList(ctx context.Context, cluster, node, since string) (*agentapi.WatchList, error) {
	ref := nodeRef{cluster: cluster, node: node}
	w.mu.Lock()
	a := w.agentNode(ref)
	l, changed := w.list(a), a.changed
	w.mu.Unlock()
	if l.Version != since {
		return l, nil
	}
	t := time.NewTimer(agentapi.WatchWait)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-w.stopped:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.list(a), nil
}

// NodeWatchEvents takes what the agent of node saw change: its watched
// resources at those paths (all of them on overflow) are checked as a
// change seen here would be. Paths the node does not watch are ignored;
// it returns how many resources it marked. Cost: O(paths).
func (w *Watcher) NodeWatchEvents(cluster, node string, ev agentapi.WatchEvents) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := w.agents[nodeRef{cluster: cluster, node: node}]
	if a == nil {
		return 0
	}
	marked := 0
	mark := func(owners []pathOwner) {
		for _, o := range owners {
			o.stack.pending[o.key] = true
			o.stack.signal()
			marked++
		}
	}
	if ev.Overflow {
		for _, owners := range a.byPath {
			mark(owners)
		}
		return marked
	}
	for _, p := range ev.Paths {
		mark(a.byPath[p])
	}
	return marked
}
