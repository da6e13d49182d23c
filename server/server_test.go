package server_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/readyz", ""); code != http.StatusOK {
		t.Errorf("/readyz = %d", code)
	}
	if code, _ := get("/v1/clusters", ""); code != http.StatusUnauthorized {
		t.Errorf("/v1/clusters without token = %d, want 401", code)
	}
	if code, body := get("/v1/clusters", "t0ken"); code != http.StatusOK || !strings.Contains(body, `"demo"`) {
		t.Errorf("/v1/clusters = %d %s, want the example cluster", code, body)
	}
	if code, body := get("/metrics", "t0ken"); code != http.StatusOK || !strings.Contains(body, "temporal_") {
		t.Errorf("/metrics = %d, want the Temporal SDK's metrics", code)
	}
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/codec/encode", strings.NewReader(`{"payloads":[]}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != http.StatusUnauthorized {
		t.Errorf("codec endpoint without token = %d, want 401", code)
	}
	if code := post("t0ken"); code != http.StatusOK {
		t.Errorf("codec endpoint = %d, want 200", code)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("server did not stop")
	}
	st, err := store.Open(context.Background(), store.DefaultURL(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.GetCluster(context.Background(), "demo")
	if err != nil || len(c.Nodes) != 3 || len(c.PluginIDs) != 1 {
		t.Fatalf("example cluster = %+v, %v", c, err)
	}
}

func TestRunRefusesAnOpenListenWithoutToken(t *testing.T) {
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{"CAIRN_API_ADDR": "0.0.0.0:0", "CAIRN_DATA_DIR": t.TempDir()}[k]
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Run(context.Background(), cfg, nil, server.Options{API: true}); err == nil {
		t.Fatal("listening beyond loopback without a token was allowed")
	}
}
