package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
)

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
	targets, skipped, ok, err := stackTargets(ctx, w.st, w.o, id)
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
		w.followUnits(ctx)
		if s != nil {
			w.log.Info("watch: stack no longer watched", "stack", id)
		}
		return
	}
	if why := w.overBound(old, targets); why != "" {
		drop()
		w.followUnits(ctx)
		w.log.Warn("watch: stack not watched: too many paths", "stack", id, "paths", len(targets), "where", why)
		return
	}
	if s == nil {
		sctx, stop := context.WithCancel(ctx)
		s = &watchedStack{id: id, pending: map[string]bool{}, wake: make(chan struct{}, 1), stop: stop}
		w.stacks[id] = s
		go w.checkLoop(sctx, s)
		w.log.Info("watch: stack watched", "stack", id, "paths", len(targets), "unwatchable", skipped)
	}
	w.watch(s, targets)
	w.unwatch(s, old)
	s.targets = targets
	w.followUnits(ctx)
	if old == nil {
		// Newly armed (at start, or watching just asked for): what
		// changed while no one watched is checked now.
		for _, t := range targets {
			s.pending[t.key] = true
		}
		s.signal()
	}
}

// overBound says where replacing old with targets would take the paths
// watched past their bound (this server's, or an agent node's), or "".
// Under w.mu.
func (w *Watcher) overBound(old, targets []watchTarget) string {
	count := func(ts []watchTarget) map[nodeRef]int {
		m := map[nodeRef]int{}
		for _, t := range ts {
			m[t.agent]++
		}
		return m
	}
	was, now := count(old), count(targets)
	if w.paths-was[nodeRef{}]+now[nodeRef{}] > w.o.MaxPaths {
		return fmt.Sprintf("this server watches %d paths, at most %d", w.paths, w.o.MaxPaths)
	}
	for ref, n := range now {
		if ref.node == "" {
			continue
		}
		have := 0
		if a := w.agents[ref]; a != nil {
			have = a.targets
		}
		if have-was[ref]+n > w.o.MaxNodePaths {
			return fmt.Sprintf("node %s of cluster %s watches %d paths, at most %d", ref.node, ref.cluster, have, w.o.MaxNodePaths)
		}
	}
	return ""
}

// watch adds targets of s to the path index and the kernel's watches (on
// each target's directory: a file deleted and written anew, or renamed
// into place, stays seen), or to their agent node's list. Under w.mu.
func (w *Watcher) watch(s *watchedStack, targets []watchTarget) {
	added := map[string]bool{}
	for _, t := range targets {
		if t.agent.node != "" {
			w.agentNode(t.agent).add(entryOf(t), pathOwner{stack: s, key: t.key})
			continue
		}
		if t.unit {
			w.byUnit[t.path] = append(w.byUnit[t.path], pathOwner{stack: s, key: t.key})
			w.paths++
			continue
		}
		w.byPath[t.path] = append(w.byPath[t.path], pathOwner{stack: s, key: t.key})
		dir := filepath.Dir(t.path)
		if err := w.dirs.add(t.path, !added[dir]); err != nil {
			w.log.Warn("watch: directory", "stack", s.id, "dir", dir, "err", err)
		}
		added[dir] = true
		w.paths++
	}
}

// unwatch removes targets of s from the index, one entry each (the
// oldest: a resync adds the new ones before it drops the old), and drops
// the kernel's watches no one needs any more. Under w.mu.
func (w *Watcher) unwatch(s *watchedStack, targets []watchTarget) {
	for _, t := range targets {
		if t.agent.node != "" {
			w.agentNode(t.agent).remove(entryOf(t), pathOwner{stack: s, key: t.key})
			continue
		}
		index := w.byPath
		if t.unit {
			index = w.byUnit
		}
		owners := index[t.path]
		if i := slices.Index(owners, pathOwner{stack: s, key: t.key}); i >= 0 {
			owners = slices.Delete(owners, i, i+1)
		}
		if len(owners) == 0 {
			delete(index, t.path)
		} else {
			index[t.path] = owners
		}
		if !t.unit {
			w.dirs.remove(t.path)
		}
		w.paths--
	}
}
