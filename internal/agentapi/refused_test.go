package agentapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OnRefused hears of a refused token (401), not of a record the node may
// not read (403), nor of a success.
func TestOnRefused(t *testing.T) {
	token, err := NewToken("c", "n")
	require.NoError(t, err)
	for _, tc := range []struct {
		status  int
		refused int32
	}{{http.StatusUnauthorized, 1}, {http.StatusForbidden, 0}, {http.StatusOK, 0}} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(`{}`))
			}))
			t.Cleanup(srv.Close)
			c, err := NewClient(srv.URL, token, nil)
			require.NoError(t, err)
			var calls atomic.Int32
			c.OnRefused(func() { calls.Add(1) })
			_, err = c.GetStepData(context.Background(), "e", "s", "step")
			if tc.status == http.StatusOK {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrForbidden)
			}
			assert.Equal(t, tc.refused, calls.Load())
		})
	}
}
