package server

import (
	"context"
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
