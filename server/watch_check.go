package server

import (
	"context"
	"slices"
	"time"
)

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
