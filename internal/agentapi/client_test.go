package agentapi

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// nodeServer answers PathNode after failing the first fail requests with
// status (0: it is not listening until then).
type nodeServer struct {
	status   int
	fail     int32
	requests atomic.Int32
}

func (s *nodeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.requests.Add(1) <= s.fail {
		w.WriteHeader(s.status)
		return
	}
	_ = json.NewEncoder(w).Encode(NodeInfo{Cluster: "c", Node: model.Node{ID: "n"}})
}

// An agent's requests wait for a server that restarts or whose proxy
// answers 502, 503 or 504; other failures are said at once.
func TestClientWaitsForTheServerToComeBack(t *testing.T) {
	token, err := NewToken("c", "n")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		status   int // 0: not listening for the first 700 ms
		fail     int32
		wantErr  string
		requests int32
	}{
		{name: "restarting", status: 0},
		{name: "bad gateway", status: http.StatusBadGateway, fail: 2, requests: 3},
		{name: "unavailable", status: http.StatusServiceUnavailable, fail: 3, requests: 4},
		{name: "gateway timeout", status: http.StatusGatewayTimeout, fail: 1, requests: 2},
		{name: "internal error", status: http.StatusInternalServerError, fail: 1, requests: 1, wantErr: "server answered 500"},
		{name: "refused token", status: http.StatusUnauthorized, fail: 1, requests: 1, wantErr: "refused by the server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := ln.Addr().String()
			s := &nodeServer{status: tc.status, fail: tc.fail}
			srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
			t.Cleanup(func() { _ = srv.Close() })
			if tc.status == 0 {
				require.NoError(t, ln.Close())
				go func() {
					time.Sleep(700 * time.Millisecond)
					if ln, err := net.Listen("tcp", addr); err == nil {
						_ = srv.Serve(ln)
					}
				}()
			} else {
				go func() { _ = srv.Serve(ln) }()
			}
			c, err := NewClient("http://"+addr, token, nil)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			info, err := c.Node(ctx)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "n", info.Node.ID)
			}
			if tc.requests > 0 {
				assert.Equal(t, tc.requests, s.requests.Load(), "requests the server answered")
			}
		})
	}
}

// A request whose context ends stops waiting for the server.
func TestClientStopsWaitingWithItsContext(t *testing.T) {
	token, err := NewToken("c", "n")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens
	c, err := NewClient("http://"+addr, token, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = c.Node(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "connection refused", "the last failure is said too")
}
