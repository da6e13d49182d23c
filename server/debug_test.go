package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Profiles are served on a loopback address only, and only to requests
// that name a loopback host (a rebound DNS name is refused).
func TestDebugProfilesStayOnLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "example.com:6060", "nohostport"} {
		_, err := serveDebug(ctx, addr, log)
		assert.Error(t, err, addr)
	}
	h := debugHandler()
	for host, want := range map[string]int{
		"127.0.0.1:6060": http.StatusOK, "localhost:6060": http.StatusOK, "[::1]:6060": http.StatusOK,
		"rebound.example:6060": http.StatusForbidden, "10.0.0.5:6060": http.StatusForbidden,
	} {
		req := httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, want, rec.Code, host)
	}

	// Served without a token on the loopback address it was given.
	addr, err := serveDebug(ctx, "127.0.0.1:0", log)
	require.NoError(t, err)
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "# HeapInuse")
}
