package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
)

const adminToken = "admin-t0ken"

// newAgentTestServer is the API with an API token, a server fingerprint
// and a cluster of an agent node and a local one.
func newAgentTestServer(t *testing.T, dbURL string) *testServer {
	s := newTestServer(t, dbURL, withToken(adminToken), withConfig(func(c *Config) { c.TLSFingerprint = "sha256:" + strings.Repeat("ab", 32) }))
	r := s.do(http.MethodPost, "/v1/clusters", model.ClusterInput{ID: "c1", Name: "c1", Nodes: []model.Node{
		{ID: "a1", Name: "a1", Roles: []string{"web"}, Mode: model.NodeAgent, Attributes: map[string]any{"rack": "r1"}},
		{ID: "l1", Name: "l1", Roles: []string{"web"}},
	}}, "Authorization", "Bearer "+adminToken)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return s
}

func (s *testServer) admin(method, path string, body any) *response {
	s.t.Helper()
	return s.do(method, path, body, "Authorization", "Bearer "+adminToken)
}

func (s *testServer) agent(method, path, token string, body any) int {
	s.t.Helper()
	return s.do(method, path, body, "Authorization", "Bearer "+token).Status
}

func (s *testServer) newToken(path string) model.NodeToken {
	s.t.Helper()
	r := s.admin(http.MethodPost, path, nil)
	require.Equal(s.t, http.StatusCreated, r.Status, "%s", r.Body)
	var tok model.NodeToken
	r.json(s.t, &tok)
	return tok
}

// Issue, rotate and revoke: a rotated token is refused once the new one
// is issued, a revoked one at once, and only hashes are stored.
func TestNodeTokenLifecycle(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "cairn.db")
	s := newAgentTestServer(t, "sqlite://"+dbFile)
	const base = "/v1/clusters/c1/nodes/a1/token"

	// Rotation enrols no node.
	r := s.admin(http.MethodPost, base+"/rotate", nil)
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	assert.Contains(t, r.errorBody(t).Message, "no token to rotate")

	first := s.newToken(base)
	assert.Equal(t, "sha256:"+strings.Repeat("ab", 32), first.ServerFingerprint)
	require.Equal(t, http.StatusOK, s.agent(http.MethodGet, agentapi.PathNode, first.Token, nil))

	second := s.newToken(base + "/rotate")
	require.NotEqual(t, first.Token, second.Token)
	assert.Equal(t, first.ServerFingerprint, second.ServerFingerprint)
	require.Equal(t, http.StatusUnauthorized, s.agent(http.MethodGet, agentapi.PathNode, first.Token, nil), "the rotated-out token still works")
	require.Equal(t, http.StatusOK, s.agent(http.MethodGet, agentapi.PathNode, second.Token, nil))

	hash, err := s.Store.NodeTokenHash(t.Context(), "c1", "a1")
	require.NoError(t, err)
	assert.Equal(t, agentapi.Hash(second.Token), hash)
	for _, f := range []string{dbFile, dbFile + "-wal"} {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for _, tok := range []string{first.Token, second.Token} {
			secret := tok[strings.LastIndex(tok, ".")+1:]
			assert.False(t, bytes.Contains(data, []byte(secret)), "a token's secret is stored in %s", f)
		}
	}

	r = s.admin(http.MethodDelete, base, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, http.StatusUnauthorized, s.agent(http.MethodGet, agentapi.PathNode, second.Token, nil), "the revoked token still works")
	require.Equal(t, http.StatusNotFound, s.admin(http.MethodDelete, base, nil).Status, "revoking twice")
	require.Equal(t, http.StatusNotFound, s.admin(http.MethodPost, base+"/rotate", nil).Status, "rotating a revoked token")

	// Issue after a revoke enrols the node again.
	third := s.newToken(base)
	require.Equal(t, http.StatusOK, s.agent(http.MethodGet, agentapi.PathNode, third.Token, nil))
}

func TestNodeTokenRefusals(t *testing.T) {
	s := newAgentTestServer(t, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	tok := s.newToken("/v1/clusters/c1/nodes/a1/token")
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		{"issue without the API token", http.MethodPost, "/v1/clusters/c1/nodes/a1/token", "", http.StatusUnauthorized},
		{"revoke without the API token", http.MethodDelete, "/v1/clusters/c1/nodes/a1/token", "", http.StatusUnauthorized},
		{"rotate with the node token", http.MethodPost, "/v1/clusters/c1/nodes/a1/token/rotate", tok.Token, http.StatusUnauthorized},
		{"revoke with the node token", http.MethodDelete, "/v1/clusters/c1/nodes/a1/token", tok.Token, http.StatusUnauthorized},
		{"rotate a local node", http.MethodPost, "/v1/clusters/c1/nodes/l1/token/rotate", adminToken, http.StatusConflict},
		{"revoke a local node", http.MethodDelete, "/v1/clusters/c1/nodes/l1/token", adminToken, http.StatusConflict},
		{"revoke an unknown node", http.MethodDelete, "/v1/clusters/c1/nodes/zz/token", adminToken, http.StatusNotFound},
		{"rotate in an unknown cluster", http.MethodPost, "/v1/clusters/c9/nodes/a1/token/rotate", adminToken, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auth := "" // the helper's default API token removed
			if tt.auth != "" {
				auth = "Bearer " + tt.auth
			}
			r := s.do(tt.method, tt.path, nil, "Authorization", auth)
			require.Equal(t, tt.want, r.Status, "%s", r.Body)
		})
	}
	// None of them changed the token.
	require.Equal(t, http.StatusOK, s.agent(http.MethodGet, agentapi.PathNode, tok.Token, nil))
}

// goodFacts is a valid report.
func goodFacts() map[string]any {
	return map[string]any{
		"hostname": "web-1", "fqdn": "web-1.example.com", "addresses": []string{"10.20.0.5/24", "2001:db8::5"},
		"os":   map[string]any{"id": "debian", "name": "Debian GNU/Linux", "version": "12 (bookworm)", "versionId": "12", "kernel": "6.1.0-18-amd64", "arch": "amd64"},
		"cpus": 4, "memoryBytes": 8 << 30, "bootId": "b920bb6e-98f5-4e5d-8a5d-ef1f1e34e743", "agentVersion": "0.2.0",
		"reportedAt": "2001-01-01T00:00:00Z",
	}
}

func TestAgentFacts(t *testing.T) {
	s := newAgentTestServer(t, "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	tok := s.newToken("/v1/clusters/c1/nodes/a1/token")

	bad := []struct {
		name string
		edit func(m map[string]any)
		want int
	}{
		{"unknown field", func(m map[string]any) { m["root"] = true }, http.StatusBadRequest},
		{"no hostname", func(m map[string]any) { delete(m, "hostname") }, http.StatusBadRequest},
		{"hostname with a space", func(m map[string]any) { m["hostname"] = "web 1" }, http.StatusBadRequest},
		{"hostname too long", func(m map[string]any) { m["hostname"] = strings.Repeat("a", 254) }, http.StatusBadRequest},
		{"address not an IP", func(m map[string]any) { m["addresses"] = []string{"example.com"} }, http.StatusBadRequest},
		{"too many addresses", func(m map[string]any) {
			a := make([]string, 65)
			for i := range a {
				a[i] = "10.0.0.1"
			}
			m["addresses"] = a
		}, http.StatusBadRequest},
		{"control characters", func(m map[string]any) { m["os"].(map[string]any)["name"] = "Debian\x1b[31m" }, http.StatusBadRequest},
		{"os text too long", func(m map[string]any) { m["os"].(map[string]any)["version"] = strings.Repeat("x", 129) }, http.StatusBadRequest},
		{"no cpus", func(m map[string]any) { m["cpus"] = 0 }, http.StatusBadRequest},
		{"negative memory", func(m map[string]any) { m["memoryBytes"] = -1 }, http.StatusBadRequest},
		{"boot id not a uuid", func(m map[string]any) { m["bootId"] = "'; drop table nodes; --" }, http.StatusBadRequest},
		{"body over 64 KiB", func(m map[string]any) { m["agentVersion"] = strings.Repeat("x", 70<<10) }, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			m := goodFacts()
			tt.edit(m)
			require.Equal(t, tt.want, s.agent(http.MethodPost, agentapi.PathFacts, tok.Token, m))
		})
	}
	require.Equal(t, http.StatusUnauthorized, s.agent(http.MethodPost, agentapi.PathFacts, "nope", goodFacts()))
	cl, err := s.Store.GetCluster(t.Context(), "c1")
	require.NoError(t, err)
	require.Nil(t, cl.Nodes[0].Facts, "a refused report was kept")

	require.Equal(t, http.StatusNoContent, s.agent(http.MethodPost, agentapi.PathFacts, tok.Token, goodFacts()))
	r := s.admin(http.MethodGet, "/v1/clusters/c1", nil)
	require.Equal(t, http.StatusOK, r.Status)
	var got model.Cluster
	r.json(t, &got)
	f := got.Nodes[0].Facts
	require.NotNil(t, f)
	assert.Equal(t, "web-1", f.Hostname)
	assert.Equal(t, []string{"10.20.0.5/24", "2001:db8::5/128"}, f.Addresses, "addresses in canonical CIDR form")
	assert.Equal(t, "12", f.OS.VersionID)
	assert.Equal(t, 4, f.CPUs)
	assert.NotEqual(t, 2001, f.ReportedAt.Year(), "the agent set the report's time")
	assert.Equal(t, map[string]any{"rack": "r1"}, got.Nodes[0].Attributes, "the report changed the operator's attributes")
	assert.Nil(t, got.Nodes[1].Facts)

	// Writing the cluster back, facts included, keeps the agent's report
	// and lets the operator change nothing of it.
	in := model.ClusterInput{Name: "c1", Nodes: got.Nodes}
	in.Nodes[0].Facts = &model.NodeFacts{Hostname: "forged", CPUs: 1}
	r = s.admin(http.MethodPut, "/v1/clusters/c1", in)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	cl, err = s.Store.GetCluster(t.Context(), "c1")
	require.NoError(t, err)
	require.NotNil(t, cl.Nodes[0].Facts)
	assert.Equal(t, "web-1", cl.Nodes[0].Facts.Hostname)

	// The node leaves the agent mode: its facts go.
	in.Nodes[0].Mode = model.NodeLocal
	r = s.admin(http.MethodPut, "/v1/clusters/c1", in)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	cl, err = s.Store.GetCluster(t.Context(), "c1")
	require.NoError(t, err)
	assert.Nil(t, cl.Nodes[0].Facts)
	raw, _ := json.Marshal(cl.Nodes[0])
	assert.NotContains(t, string(raw), "facts")
}
