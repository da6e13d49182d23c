package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
)

// maxGroup bounds how many transactions one commit takes.
const maxGroup = 256

// groupCommit runs the write transactions of a single-writer database
// (SQLite, one connection) that arrive together as one transaction, so one
// commit — one fsync of the WAL — makes all of them durable. Each caller's
// fn runs in a savepoint of its own, in arrival order: a fn that fails
// rolls back only its own writes and gets its own error; the others are
// committed. A caller returns once the commit that holds its writes
// returned, so durability is what a transaction of its own gives.
//
// The first caller to find no transaction running leads: it takes the
// queued fns (its own first, at most maxGroup), runs and commits them, and
// hands the lead to the first caller still queued. On a fleet, a dependency
// level's units finish together and each writes its steps' records: a
// thousand commits of 2–5 ms each, one after the other, became a few.
// Cost: a savepoint per fn, in memory; nothing when callers come one at a
// time (the leader's group is itself).
type groupCommit struct {
	db      *sql.DB
	mu      sync.Mutex
	queue   []*groupTx
	leading bool
	// commits counts the transactions committed, groups counted once.
	commits atomic.Int64
}

// groupTx is one caller's transaction: fn, and where its outcome (done)
// or the lead is handed to it.
type groupTx struct {
	ctx  context.Context
	fn   func(*sql.Tx) error
	done chan error
	lead chan struct{}
}

// run runs fn in a transaction (shared with others that arrive meanwhile)
// and returns once it is committed or failed.
func (g *groupCommit) run(ctx context.Context, fn func(*sql.Tx) error) error {
	me := &groupTx{ctx: ctx, fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, me)
	if g.leading {
		g.mu.Unlock()
		select {
		case err := <-me.done:
			return err
		case <-me.lead:
		}
	} else {
		g.leading = true
		g.mu.Unlock()
	}
	// Leading: me is at the head of the queue. Whoever arrives while the
	// group commits queues behind it, for the next group.
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	group := append([]*groupTx(nil), g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()
	g.commit(group)
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{}
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return <-me.done
}

// commit runs a group's fns in one transaction, each in a savepoint, and
// tells each its outcome.
func (g *groupCommit) commit(group []*groupTx) {
	errs := make([]error, len(group))
	// The transaction is no one caller's: its context is none of theirs
	// (each fn's statements still use its own).
	tx, err := g.db.BeginTx(context.Background(), nil)
	if err == nil {
		for i, t := range group {
			errs[i] = savepoint(tx, t)
		}
		err = tx.Commit()
		if err != nil {
			_ = tx.Rollback()
		}
		g.commits.Add(1)
	}
	for i, t := range group {
		if err != nil {
			errs[i] = errors.Join(errs[i], err)
		}
		t.done <- errs[i]
	}
}

// savepoint runs t's fn in a savepoint of tx, rolled back if it fails.
func savepoint(tx *sql.Tx, t *groupTx) error {
	if err := t.ctx.Err(); err != nil {
		return err
	}
	if _, err := tx.Exec(`SAVEPOINT caller`); err != nil {
		return err
	}
	if err := t.fn(tx); err != nil {
		if _, rerr := tx.Exec(`ROLLBACK TO SAVEPOINT caller`); rerr != nil {
			return errors.Join(err, rerr)
		}
		_, _ = tx.Exec(`RELEASE SAVEPOINT caller`)
		return err
	}
	_, err := tx.Exec(`RELEASE SAVEPOINT caller`)
	return err
}
