package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Writes that arrive together on SQLite share commits; each keeps its own
// outcome: a transaction that fails leaves nothing of its writes, the
// others are all there.
func TestGroupCommitKeepsEachTransactionApart(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	s := st.(*sqlStore)
	require.NotNil(t, s.group)

	const writers = 200
	bad := errors.New("refused")
	errs := make([]error, writers)
	// The first transaction holds the writer until the others queue.
	queued := func() int {
		s.group.mu.Lock()
		defer s.group.mu.Unlock()
		return len(s.group.queue)
	}
	first := make(chan struct{})
	wg0 := sync.WaitGroup{}
	wg0.Go(func() {
		errs[0] = s.inTx(ctx, func(tx *sql.Tx) error {
			close(first)
			for queued() < writers-1 {
				runtime.Gosched()
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO step_data (exec_id, kind, step_id, data) VALUES ($1, $2, $3, $4)`,
				"e1", "outputs", "s000", []byte("s000"))
			return err
		})
	})
	<-first
	var wg sync.WaitGroup
	for i := 1; i < writers; i++ {
		wg.Go(func() {
			id := fmt.Sprintf("s%03d", i)
			errs[i] = s.inTx(ctx, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO step_data (exec_id, kind, step_id, data) VALUES ($1, $2, $3, $4)`,
					"e1", "outputs", id, []byte(id)); err != nil {
					return err
				}
				if i%10 == 3 {
					return bad // after its write: the write must go too
				}
				return nil
			})
		})
	}
	wg.Wait()
	wg0.Wait()
	rows, err := s.ListStepData(ctx, "e1", "outputs")
	require.NoError(t, err)
	for i := range writers {
		id := fmt.Sprintf("s%03d", i)
		if i%10 == 3 {
			assert.ErrorIs(t, errs[i], bad, id)
			assert.NotContains(t, rows, id, "a failed transaction's write is rolled back")
			continue
		}
		assert.NoError(t, errs[i], id)
		assert.Equal(t, []byte(id), rows[id], id)
	}
	assert.Len(t, rows, writers-writers/10)
	assert.Equal(t, int64(2), s.group.commits.Load(), "the first transaction, then the 199 queued behind it in one commit")

	// A writer whose context is done before its turn writes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = s.PutStepData(cctx, "e1", "late", "outputs", []byte("x"))
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.GetStepData(ctx, "e1", "late", "outputs")
	require.ErrorIs(t, err, ErrNotFound)
}
