package graphe2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// An agent configured for mutual TLS and an API key reaches Temporal only
// through a TLS frontend requiring both, and runs its node's step.
func TestAgentOverMutualTLSWithAPIKey(t *testing.T) {
	const apiKey = "tk_agent_77c1"
	h := newHarness(t, harnessOptions{}, model.Node{ID: "n4", Name: "n4", Roles: []string{"compute"}, Mode: model.NodeAgent})
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: hello
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo hello > hello.txt"}
`)
	ca := testenv.NewCA(t, "cairn test CA")
	serverCert, serverKey := ca.Server(t, "temporal.test")
	front := testenv.StartTLSFrontend(t, h.dev.HostPort, testenv.TLSFrontendOptions{
		Certificate: testenv.KeyPair(t, serverCert, serverKey), ClientCAs: ca.Pool(), APIKey: apiKey,
	})
	dir := t.TempDir()
	cert, key := ca.Client(t, "cairn-agent-n4")
	agentRoot := filepath.Join(t.TempDir(), "n4")
	h.startAgent("n4", agentRoot,
		"CAIRN_TEMPORAL_ADDRESS="+front.HostPort,
		"CAIRN_TEMPORAL_TLS_CA="+testenv.WriteFile(t, dir, "ca.pem", ca.PEM),
		"CAIRN_TEMPORAL_TLS_CERT="+testenv.WriteFile(t, dir, "client.pem", cert),
		"CAIRN_TEMPORAL_TLS_KEY="+testenv.WriteFile(t, dir, "client-key.pem", key),
		"CAIRN_TEMPORAL_TLS_SERVER_NAME=temporal.test",
		"CAIRN_TEMPORAL_API_KEY_FILE="+testenv.WriteFile(t, dir, "api-key", []byte(apiKey)),
	)

	done := h.run(contract.GraphRequest{})
	mustStatus(t, done, model.ExecCompleted)
	assert.Equal(t, "hello\n", readFile(t, filepath.Join(agentRoot, "hello.txt")))

	calls := front.Calls()
	polled := false
	for _, c := range calls {
		polled = polled || strings.HasSuffix(c.Method, "/PollActivityTaskQueue")
		assert.Equal(t, "cairn-agent-n4", c.ClientCN, c.Method)
		assert.Equal(t, "Bearer "+apiKey, c.Authorization, c.Method)
	}
	require.True(t, polled, "the agent never polled through the TLS frontend")
}
