package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/server"
)

// `cairn server` configured for mutual TLS and an API key reaches Temporal
// only through the TLS frontend: its worker polls and its readiness check
// go through it with the client certificate and the key, and the key is
// never logged.
func TestRunOverMutualTLSWithAPIKey(t *testing.T) {
	const apiKey = "tk_server_5e1f"
	dev := testenv.Temporal(t)
	ca := testenv.NewCA(t, "cairn test CA")
	serverCert, serverKey := ca.Server(t, "temporal.test")
	front := testenv.StartTLSFrontend(t, dev.HostPort, testenv.TLSFrontendOptions{
		Certificate: testenv.KeyPair(t, serverCert, serverKey), ClientCAs: ca.Pool(), APIKey: apiKey,
	})
	dir := t.TempDir()
	cert, key := ca.Client(t, "cairn-server")
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{
			"CAIRN_TEMPORAL_ADDRESS":         front.HostPort,
			"CAIRN_TEMPORAL_TLS_CA":          testenv.WriteFile(t, dir, "ca.pem", ca.PEM),
			"CAIRN_TEMPORAL_TLS_CERT":        testenv.WriteFile(t, dir, "client.pem", cert),
			"CAIRN_TEMPORAL_TLS_KEY":         testenv.WriteFile(t, dir, "client-key.pem", key),
			"CAIRN_TEMPORAL_TLS_SERVER_NAME": "temporal.test",
			"CAIRN_TEMPORAL_API_KEY":         apiKey,
			"CAIRN_DATA_DIR":                 dir,
			"CAIRN_API_ADDR":                 "127.0.0.1:0",
			"CAIRN_TASK_QUEUE":               "server-tls-test",
		}[k]
	}))
	require.NoError(t, err)
	var logs testenv.SyncBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, log, server.Options{API: true, Ready: func(addr string) { ready <- addr }})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("server not ready")
	}

	resp, err := http.Get("http://" + addr + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	polls := func() bool {
		for _, c := range front.Calls() {
			if strings.HasSuffix(c.Method, "/PollWorkflowTaskQueue") {
				return true
			}
		}
		return false
	}
	require.Eventually(t, polls, 30*time.Second, 50*time.Millisecond, "the worker does not poll through the TLS frontend")
	for _, c := range front.Calls() {
		assert.Equal(t, "cairn-server", c.ClientCN, c.Method)
		assert.Equal(t, "Bearer "+apiKey, c.Authorization, c.Method)
	}

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop")
	}
	assert.NotEmpty(t, logs.String())
	assert.NotContains(t, logs.String(), apiKey)
}

// A bad Temporal TLS setting stops `cairn server` at start, naming it.
func TestRunFailsOnABadTemporalTLSSetting(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{
			"CAIRN_TEMPORAL_TLS_CERT": testenv.WriteFile(t, dir, "client.pem", []byte("x")),
			"CAIRN_DATA_DIR":          dir,
		}[k]
	}))
	require.NoError(t, err)
	err = server.Run(context.Background(), cfg, nil, server.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CAIRN_TEMPORAL_TLS_CERT is set without CAIRN_TEMPORAL_TLS_KEY")
}
