package server_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/server"
	"github.com/cairn-io/cairn/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// The assembled server serves the API behind its token, reports ready,
// exports the Temporal SDK's metrics, seeds the example cluster and serves
// the UI's codec endpoint when a key is set; it stops when its context ends.
func TestRunServesEverything(t *testing.T) {
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{
			"CAIRN_TEMPORAL_ADDRESS": dev.HostPort,
			"CAIRN_DATA_DIR":         dir,
			"CAIRN_API_ADDR":         "127.0.0.1:0",
			"CAIRN_API_TOKEN":        "t0ken",
			"CAIRN_CODEC_KEY":        strings.Repeat("ab", 32),
			"CAIRN_TASK_QUEUE":       "server-test",
		}[k]
	}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, nil, server.Options{API: true, ExampleCluster: "demo", Ready: func(addr string) { ready <- addr }})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("server not ready")
	}

	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, _ := get("/readyz", "")
	assert.Equal(t, http.StatusOK, code, "/readyz")
	code, _ = get("/v1/clusters", "")
	assert.Equal(t, http.StatusUnauthorized, code, "/v1/clusters without token = %d, want 401", code)
	code, body := get("/v1/clusters", "t0ken")
	require.Equal(t, http.StatusOK, code, "/v1/clusters = %d %s, want the example cluster", code, body)
	assert.Contains(t, body, `"demo"`, "/v1/clusters = %d %s, want the example cluster", code, body)
	code, body = get("/metrics", "t0ken")
	require.Equal(t, http.StatusOK, code, "/metrics = %d, want the Temporal SDK's metrics", code)
	assert.Contains(t, body, "temporal_", "/metrics = %d, want the Temporal SDK's metrics", code)
	// Latencies are histograms, whose size does not grow with the
	// observations kept (a summary's quantile streams did, per node queue).
	assert.Contains(t, body, "temporal_request_latency_seconds_bucket{")
	assert.NotRegexp(t, `(?m)^temporal_\S*\{[^}]*quantile=`, body)
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/codec/encode", strings.NewReader(`{"payloads":[]}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	code = post("")
	assert.Equal(t, http.StatusUnauthorized, code, "codec endpoint without token = %d, want 401", code)
	code = post("t0ken")
	assert.Equal(t, http.StatusOK, code, "codec endpoint = %d, want 200", code)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "Run")
	case <-time.After(60 * time.Second):
		t.Fatal("server did not stop")
	}
	st, err := store.Open(context.Background(), store.DefaultURL(dir))
	require.NoError(t, err)
	defer st.Close()
	c, err := st.GetCluster(context.Background(), "demo")
	require.NoError(t, err, "example cluster = %+v, %v", c, err)
	require.Len(t, c.Nodes, 3, "example cluster = %+v, %v", c, err)
	require.Len(t, c.PluginIDs, 1, "example cluster = %+v, %v", c, err)
}

func TestRunRefusesAnOpenListenWithoutToken(t *testing.T) {
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{"CAIRN_API_ADDR": "0.0.0.0:0", "CAIRN_DATA_DIR": t.TempDir()}[k]
	}))
	require.NoError(t, err)
	require.Error(t, server.Run(context.Background(), cfg, nil, server.Options{API: true}), "listening beyond loopback without a token was allowed")
}
