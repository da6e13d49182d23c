package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Profiles are served on loopback only, without a token.
func TestServeDebug(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "nohostport"} {
		_, err := serveDebug(ctx, addr, log)
		require.Error(t, err, addr)
	}
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
