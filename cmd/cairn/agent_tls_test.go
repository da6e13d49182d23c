package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/apitls"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// An agent reaches the server over TLS only with its certificate pinned
// (or signed by the CA it is given), refuses plain HTTP beyond loopback,
// and reports its host's facts once connected.
func TestAgentOverTLS(t *testing.T) {
	for _, k := range []string{"CAIRN_CLUSTER", "CAIRN_NODE", "CAIRN_NODE_ROOT", "CAIRN_DATABASE_URL", "CAIRN_CODEC_KEY", "CAIRN_NODE_TOKEN",
		"CAIRN_SERVER", "CAIRN_SERVER_FINGERPRINT", "CAIRN_SERVER_CA", "CAIRN_INSECURE_HTTP"} {
		t.Setenv(k, "")
	}
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	cluster := "agenttls-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	require.NoError(t, st.PutCluster(context.Background(), &model.Cluster{ID: cluster, Name: "env", Nodes: []model.Node{
		{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent},
	}}))
	cert, fingerprint, err := apitls.ServerCertificate("", "", dir, nil)
	require.NoError(t, err)
	e, err := api.New(api.Config{TLSFingerprint: fingerprint}, api.Deps{Store: st})
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(e)
	srv.TLS = apitls.ServerConfig(cert)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	token, err := agentapi.NewToken(cluster, "web-1")
	require.NoError(t, err)
	require.NoError(t, st.SetNodeTokenHash(context.Background(), cluster, "web-1", agentapi.Hash(token)))
	common := []string{"--temporal-address", dev.HostPort, "--node-token", token, "--root", filepath.Join(dir, "root")}

	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"no pin, a self-signed certificate", []string{"--server", srv.URL}, "certificate"},
		{"another certificate's pin", []string{"--server", srv.URL, "--server-fingerprint", apitls.Fingerprint([]byte("x"))}, "not the pinned one"},
		{"a malformed pin", []string{"--server", srv.URL, "--server-fingerprint", "sha256:abc"}, "64 hex digits"},
		{"plain HTTP beyond loopback", []string{"--server", "http://192.0.2.10:8080"}, "refusing plain HTTP to 192.0.2.10:8080"},
		{"plain HTTP with a pin", []string{"--server", "http://127.0.0.1:1", "--server-fingerprint", fingerprint}, "use https://"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := newAgentCmd(&app{stdout: &out, stderr: &errOut})
			cmd.SetArgs(append(append([]string{}, common...), tt.args...))
			err := cmd.ExecuteContext(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	serve := func(t *testing.T, args ...string) {
		var out testenv.SyncBuffer
		cmd := newAgentCmd(&app{stdout: &out, stderr: &testenv.SyncBuffer{}})
		cmd.SetArgs(append(append([]string{}, common...), args...))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(ctx) }()
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), "polling task queue") {
			select {
			case err := <-done:
				cancel()
				t.Fatalf("agent exited: %v; output %q", err, out.String())
			default:
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("agent did not start; output %q", out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		require.NoError(t, <-done)
	}
	t.Run("pinned", func(t *testing.T) {
		serve(t, "--server", srv.URL, "--server-fingerprint", fingerprint)
		cl, err := st.GetCluster(context.Background(), cluster)
		require.NoError(t, err)
		require.NotNil(t, cl.Nodes[0].Facts, "the agent reported no facts")
		assert.Positive(t, cl.Nodes[0].Facts.CPUs)
	})
	t.Run("the certificate as a CA", func(t *testing.T) {
		serve(t, "--server", srv.URL, "--server-ca", filepath.Join(dir, "tls", "api-cert.pem"))
	})
}
