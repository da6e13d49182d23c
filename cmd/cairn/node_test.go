package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/apitls"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// `cairn node token` over TLS, the CLI pinning the server's certificate:
// issue prints the agent's settings, rotate and revoke cut the old token
// off, and `cairn cluster nodes` shows the facts an agent reported.
func TestNodeTokenCommand(t *testing.T) {
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.PutCluster(context.Background(), &model.Cluster{ID: "env-1", Name: "env-1", Nodes: []model.Node{
		{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent},
		{ID: "dev-1", Name: "dev-1", Roles: []string{"web"}},
	}}))
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	fingerprint := apitls.Fingerprint(srv.Certificate().Raw)
	e, err := api.New(api.Config{Token: "adm", TLSFingerprint: fingerprint}, api.Deps{Store: st})
	require.NoError(t, err)
	srv.Config.Handler = e

	for _, k := range []string{"CAIRN_SERVER_CA", "NO_COLOR"} {
		t.Setenv(k, "")
	}
	t.Setenv("CAIRN_SERVER", srv.URL)
	t.Setenv("CAIRN_API_TOKEN", "adm")
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := execute(context.Background(), args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	agentStatus := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+agentapi.PathNode, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	// Without the pin the self-signed certificate is not trusted.
	t.Setenv("CAIRN_SERVER_FINGERPRINT", "")
	code, _, errOut := cli("node", "token", "env-1", "web-1")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "certificate")
	// With another certificate's fingerprint: refused too.
	t.Setenv("CAIRN_SERVER_FINGERPRINT", apitls.Fingerprint([]byte("another")))
	code, _, errOut = cli("node", "token", "env-1", "web-1")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "not the pinned one")

	t.Setenv("CAIRN_SERVER_FINGERPRINT", fingerprint)
	code, out, errOut := cli("node", "token", "env-1", "web-1", "--rotate")
	require.Equal(t, exitFailure, code, out)
	assert.Contains(t, errOut, "404")

	code, out, errOut = cli("node", "token", "env-1", "web-1")
	require.Equal(t, 0, code, errOut)
	env := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			env[k] = v
		}
	}
	first := env["CAIRN_NODE_TOKEN"]
	assert.Equal(t, map[string]string{"CAIRN_SERVER": srv.URL, "CAIRN_CLUSTER": "env-1", "CAIRN_NODE": "web-1",
		"CAIRN_NODE_TOKEN": first, "CAIRN_SERVER_FINGERPRINT": fingerprint}, env)
	require.Equal(t, http.StatusOK, agentStatus(first))

	code, out, errOut = cli("node", "token", "env-1", "web-1", "--rotate", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var rotated model.NodeToken
	require.NoError(t, json.Unmarshal([]byte(out), &rotated))
	require.NotEqual(t, first, rotated.Token)
	assert.Equal(t, fingerprint, rotated.ServerFingerprint)
	require.Equal(t, http.StatusUnauthorized, agentStatus(first))
	require.Equal(t, http.StatusOK, agentStatus(rotated.Token))

	code, out, errOut = cli("node", "token", "env-1", "web-1", "--revoke")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "token of node web-1 of cluster env-1 revoked\n", out)
	require.Equal(t, http.StatusUnauthorized, agentStatus(rotated.Token))

	code, _, errOut = cli("node", "token", "env-1", "web-1", "--rotate", "--revoke")
	require.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "none of the others can be")
	code, _, errOut = cli("node", "token", "env-1", "dev-1")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "409")

	// Facts, as an agent reports them, in the nodes' table.
	tok, err := agentapi.NewToken("env-1", "web-1")
	require.NoError(t, err)
	require.NoError(t, st.SetNodeTokenHash(context.Background(), "env-1", "web-1", agentapi.Hash(tok)))
	c, err := agentapi.NewClient(srv.URL, tok, agentapi.NewHTTPClient(srv.Client().Transport.(*http.Transport).TLSClientConfig))
	require.NoError(t, err)
	require.NoError(t, c.ReportFacts(context.Background(), &model.NodeFacts{Hostname: "web-1.host", OS: model.OSFacts{ID: "debian", VersionID: "12"}, CPUs: 4, MemoryBytes: 8 << 30}))
	code, out, errOut = cli("cluster", "nodes", "env-1")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^web-1\s+agent\s+web\s+web-1\.host\s+debian 12\s+4\s+8\.0 GiB\s+\d{4}-`, out)
	assert.Regexp(t, `(?m)^dev-1\s+local\s+web\s+-\s+-`, out)
}
