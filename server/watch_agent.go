package server

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/cairn-io/cairn/internal/agentapi"
)

// agentEntry is one thing an agent node watches: a path in its node
// root, a path of its host, or a systemd unit.
type agentEntry struct {
	kind int // watchPath, watchPackage (a host path) or watchUnit
	name string
}

// entryOf is the agent entry of a target on an agent node.
func entryOf(t watchTarget) agentEntry {
	switch {
	case t.unit:
		return agentEntry{kind: watchUnit, name: t.path}
	case t.host:
		return agentEntry{kind: watchPackage, name: t.path}
	}
	return agentEntry{kind: watchPath, name: t.path}
}

// agentWatch is what one agent node watches for this server's watched
// stacks: its entries and their owners, and the list's version, bumped
// when an entry comes or goes; changed is closed then (and replaced) to
// wake the node's agent waiting for it.
type agentWatch struct {
	owners  map[agentEntry][]pathOwner
	targets int
	version uint64
	changed chan struct{}
	// waiting counts the node's requests waiting for a change, at most
	// maxWatchWaiters.
	waiting int
}

// maxWatchWaiters bounds the requests of one node that wait for its list
// to change: an agent holds one; more (a token holder opening many) are
// answered at once, so they hold no goroutine of the server's.
const maxWatchWaiters = 4

// agentNode is the node's entry, made when first asked for. Entries stay
// for the watcher's life: one per agent node that asked or has watched
// resources. Under w.mu.
func (w *Watcher) agentNode(ref nodeRef) *agentWatch {
	a := w.agents[ref]
	if a == nil {
		a = &agentWatch{owners: map[agentEntry][]pathOwner{}, changed: make(chan struct{})}
		w.agents[ref] = a
	}
	return a
}

func (a *agentWatch) add(e agentEntry, o pathOwner) {
	if len(a.owners[e]) == 0 {
		a.bump()
	}
	a.owners[e] = append(a.owners[e], o)
	a.targets++
}

func (a *agentWatch) remove(e agentEntry, o pathOwner) {
	owners := a.owners[e]
	if i := slices.Index(owners, o); i >= 0 {
		owners = slices.Delete(owners, i, i+1)
	}
	if len(owners) == 0 {
		delete(a.owners, e)
		a.bump()
	} else {
		a.owners[e] = owners
	}
	a.targets--
}

// bump makes a new version of the list and wakes those waiting for one.
func (a *agentWatch) bump() {
	a.version++
	close(a.changed)
	a.changed = make(chan struct{})
}

// list is the node's WatchList. Cost: O(n log n) in its entries.
func (w *Watcher) list(a *agentWatch) *agentapi.WatchList {
	l := &agentapi.WatchList{Version: w.epoch + "." + strconv.FormatUint(a.version, 10), Paths: []string{}}
	for e := range a.owners {
		switch e.kind {
		case watchUnit:
			l.Units = append(l.Units, e.name)
		case watchPackage:
			l.Host = append(l.Host, e.name)
		default:
			l.Paths = append(l.Paths, e.name)
		}
	}
	slices.Sort(l.Paths)
	slices.Sort(l.Host)
	slices.Sort(l.Units)
	return l
}

// NodeWatchList answers what the agent of node (of cluster) is to watch.
// When since is the current version it waits up to agentapi.WatchWait
// for a change first (or until ctx ends or the watcher stops), so an
// agent learns of a new list at once while holding one request open. A
// version of an earlier server process is never current: an agent that
// reconnects to a restarted server gets the list at once. At most
// maxWatchWaiters requests of a node wait; the others are answered at
// once.
func (w *Watcher) NodeWatchList(ctx context.Context, cluster, node, since string) (*agentapi.WatchList, error) {
	ref := nodeRef{cluster: cluster, node: node}
	w.mu.Lock()
	a := w.agentNode(ref)
	l, changed := w.list(a), a.changed
	if l.Version != since || a.waiting >= maxWatchWaiters {
		w.mu.Unlock()
		return l, nil
	}
	a.waiting++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		a.waiting--
		w.mu.Unlock()
	}()
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
// resources at those paths and units (all of them on overflow) are
// checked as a change seen here would be. What the node does not watch
// is ignored; it returns how many resources it marked. Cost: O(events).
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
		for _, owners := range a.owners {
			mark(owners)
		}
		return marked
	}
	for _, p := range ev.Paths {
		mark(a.owners[agentEntry{kind: watchPath, name: p}])
		mark(a.owners[agentEntry{kind: watchPackage, name: p}])
	}
	for _, u := range ev.Units {
		mark(a.owners[agentEntry{kind: watchUnit, name: u}])
	}
	return marked
}
