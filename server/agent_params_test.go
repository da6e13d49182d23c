package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// A step on an agent node reads the parameters given with the apply: its
// env ref value wins over the agent's own environment, and its secret and
// variable reach it. The agent API gives a node only the env refs and
// secrets its steps read, and nothing to a node without steps in the
// execution.
func TestAgentStepsReadTheApplysParameters(t *testing.T) {
	t.Setenv("AGENT_GREETING", "from the agent's environment")
	e, cluster, stack, tokenA, tokenB, rootA, rootB := startTwoAgents(t, "params", "agent-params")
	pkg := `apiVersion: cairn/v1
kind: File
metadata: {name: control}
spec: {path: control.txt, content: "{{ secret \"CONTROL_ONLY\" }}"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: web}
spec:
  path: web.txt
  content: "{{ env \"AGENT_GREETING\" }}|{{ secret \"WEB_TOKEN\" }}|{{ .vars.site }}"
target: {roles: [web]}
`
	envelope, err := json.Marshal(map[string]any{
		"package": pkg,
		"envRefs": map[string]string{"AGENT_GREETING": "from the apply", "UNREAD": "x"},
		"secrets": map[string]string{"WEB_TOKEN": "w3b-s3cret", "CONTROL_ONLY": "c0ntrol-s3cret"},
		"vars":    map[string]any{"site": "lab"},
	})
	require.NoError(t, err)
	code, body := e.call(http.MethodPost, "/v1/stacks/"+stack.ID+"/apply?wait=true&cluster="+cluster, "admin-t0ken", "application/json", string(envelope))
	require.Equal(t, http.StatusOK, code, body)
	var exec struct {
		ID     string
		Status string
	}
	require.NoError(t, json.Unmarshal([]byte(body), &exec))
	require.Equal(t, string(model.ExecCompleted), exec.Status, body)
	assert.NotContains(t, body, "s3cret", "the execution's answer shows no secret")

	web, err := os.ReadFile(filepath.Join(rootA, "web.txt"))
	require.NoError(t, err)
	assert.Equal(t, "from the apply|w3b-s3cret|lab", string(web), "the step on the agent read the apply's env ref, secret and variable")
	assert.NoFileExists(t, filepath.Join(rootB, "web.txt"))

	params := func(token string) (int, string) {
		q := url.Values{"execution": {exec.ID}, "kind": {"params"}, "key": {""}}
		return e.call(http.MethodGet, "/v1/agent/data?"+q.Encode(), token, "", "")
	}
	code, body = params(tokenA)
	require.Equal(t, http.StatusOK, code, body)
	var got model.ApplyParams
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, map[string]string{"AGENT_GREETING": "from the apply"}, got.EnvRefs, "only the env refs node a1's steps read")
	assert.Equal(t, map[string]string{"WEB_TOKEN": "w3b-s3cret"}, got.Secrets, "only the secrets node a1's steps read")
	assert.Equal(t, map[string]any{"site": "lab"}, got.Vars)

	code, body = params(tokenB)
	assert.Equal(t, http.StatusForbidden, code, "node a2 has no step in the execution: %s", body)
	assert.NotContains(t, body, "s3cret")
	code, _ = params("admin-t0ken")
	assert.Equal(t, http.StatusUnauthorized, code, "the API token is not a node token")
	q := url.Values{"execution": {exec.ID}, "kind": {"params"}, "key": {"file/web@a1"}}
	code, _ = e.call(http.MethodGet, "/v1/agent/data?"+q.Encode(), tokenA, "", "")
	assert.Equal(t, http.StatusForbidden, code, "parameters are read under their own key only")
	code, _ = e.call(http.MethodPost, "/v1/agent/data?"+url.Values{"execution": {exec.ID}, "kind": {"params"}}.Encode(),
		tokenA, "application/json", `{"": "e30="}`)
	assert.Equal(t, http.StatusForbidden, code, "an agent cannot write parameters")
}
