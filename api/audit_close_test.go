package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// slowAudit holds every audit append until released.
type slowAudit struct {
	store.Store
	release chan struct{}
}

func (s slowAudit) AppendAudit(ctx context.Context, entries []model.AuditEntry) error {
	<-s.release
	return s.Store.AppendAudit(ctx, entries)
}

// TestCloseWritesTheAuditTrail: entries still queued when the server
// shuts down are written before Close returns, and a request served
// after Close writes its own.
func TestCloseWritesTheAuditTrail(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, sqliteURL(t))
	slow := slowAudit{Store: st, release: make(chan struct{})}
	h, err := New(Config{Token: "adm"}, Deps{Store: slow})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	for range 3 {
		resp, err := http.Get(srv.URL + "/v1/stacks") // no token: 401, audited
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	srv.Close()
	entries, err := st.ListAudit(ctx, model.AuditFilter{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, entries, "the entries were written before the store let them")

	closed := make(chan error, 1)
	go func() { closed <- h.Close(ctx) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with the audit entries unwritten", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(slow.release)
	require.NoError(t, <-closed)
	entries, err = st.ListAudit(ctx, model.AuditFilter{Limit: 10})
	require.NoError(t, err)
	require.Len(t, entries, 3, "entries queued before Close")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stacks", nil))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	entries, err = st.ListAudit(ctx, model.AuditFilter{Limit: 10})
	require.NoError(t, err)
	require.Len(t, entries, 4, "a request after Close writes its own entry")
	require.NoError(t, h.Close(ctx), "a second Close")
}

// TestCloseGivesUpWhenItsContextEnds: a store that does not answer does
// not hold the shutdown past its deadline.
func TestCloseGivesUpWhenItsContextEnds(t *testing.T) {
	st := openStore(t, sqliteURL(t))
	slow := slowAudit{Store: st, release: make(chan struct{})}
	defer close(slow.release)
	h, err := New(Config{Token: "adm"}, Deps{Store: slow})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stacks", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.Close(ctx), context.DeadlineExceeded)
}
