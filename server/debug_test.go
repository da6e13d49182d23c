package server

import (
	"context"
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
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:6060", "example.com:6060", "nohostport"} {
		assert.Error(t, serveDebug(ctx, addr, slog.New(slog.DiscardHandler)), addr)
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
}
