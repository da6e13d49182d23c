package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/server"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// agentEnv is a server with a codec key and an API token, and a cluster of
// two agent nodes.
type agentEnv struct {
	t    *testing.T
	dev  *testenv.DevServer
	addr string
	key  string
}

func startAgentEnv(t *testing.T, cluster string) *agentEnv {
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.DefaultURL(dir))
	require.NoError(t, err)
	require.NoError(t, st.PutCluster(context.Background(), &model.Cluster{ID: cluster, Name: cluster, Nodes: []model.Node{
		{ID: "a1", Name: "a1", Roles: []string{"web"}, Mode: model.NodeAgent},
		{ID: "a2", Name: "a2", Roles: []string{"db"}, Mode: model.NodeAgent},
	}}))
	require.NoError(t, st.Close())
	key := strings.Repeat("cd", 32)
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{
			"CAIRN_TEMPORAL_ADDRESS": dev.HostPort,
			"CAIRN_DATA_DIR":         dir,
			"CAIRN_API_ADDR":         "127.0.0.1:0",
			"CAIRN_API_TOKEN":        "admin-t0ken",
			"CAIRN_CODEC_KEY":        key,
			"CAIRN_TASK_QUEUE":       "agent-test-" + cluster,
			"CAIRN_CONTROL_ROOT":     filepath.Join(dir, "control"),
		}[k]
	}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, nil, server.Options{API: true, Ready: func(addr string) { ready <- addr }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("server did not stop")
		}
	})
	select {
	case addr := <-ready:
		return &agentEnv{t: t, dev: dev, addr: addr, key: key}
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("server not ready")
	}
	return nil
}

// call sends a request with a bearer token and returns the status and body.
func (e *agentEnv) call(method, path, token, contentType, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, "http://"+e.addr+path, strings.NewReader(body))
	require.NoError(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, string(b)
}

// issue asks the server for a node's token.
func (e *agentEnv) issue(cluster, node string) string {
	code, body := e.call(http.MethodPost, "/v1/clusters/"+cluster+"/nodes/"+node+"/token", "admin-t0ken", "", "")
	require.Equal(e.t, http.StatusCreated, code, body)
	var out struct{ Token string }
	require.NoError(e.t, json.Unmarshal([]byte(body), &out))
	require.NotEmpty(e.t, out.Token)
	return out.Token
}

// startAgent runs `cairn agent` with a node token and the codec key, and no
// database settings at all.
func (e *agentEnv) startAgent(token, root string) {
	for _, k := range []string{"CAIRN_DATABASE_URL", "CAIRN_DATA_DIR"} {
		require.Empty(e.t, os.Getenv(k), "the agent must not find database settings in the environment")
	}
	cfg, err := config.Load(config.Values(func(k string) string {
		return map[string]string{
			"CAIRN_TEMPORAL_ADDRESS": e.dev.HostPort,
			"CAIRN_SERVER":           "http://" + e.addr,
			"CAIRN_NODE_TOKEN":       token,
			"CAIRN_CODEC_KEY":        e.key,
			"CAIRN_NODE_ROOT":        root,
		}[k]
	}))
	require.NoError(e.t, err)
	require.Empty(e.t, cfg.DatabaseURL)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *worker.Agent, 1)
	done := make(chan error, 1)
	go func() { done <- server.ServeAgent(ctx, cfg, nil, func(a *worker.Agent) { ready <- a }) }()
	e.t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-ready:
	case err := <-done:
		e.t.Fatalf("agent stopped: %v", err)
	case <-time.After(60 * time.Second):
		e.t.Fatal("agent not ready")
	}
}

// startTwoAgents starts an agent environment on a new cluster named from
// prefix, agents for its nodes a1 and a2 (each rooted in a temporary
// directory), and a stack named stackName.
func startTwoAgents(t *testing.T, prefix, stackName string) (e *agentEnv, cluster string, stack struct{ ID string }, tokenA, tokenB, rootA, rootB string) {
	t.Helper()
	cluster = prefix + "-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	e = startAgentEnv(t, cluster)
	tokenA, tokenB = e.issue(cluster, "a1"), e.issue(cluster, "a2")
	rootA, rootB = t.TempDir(), t.TempDir()
	e.startAgent(tokenA, rootA)
	e.startAgent(tokenB, rootB)
	code, body := e.call(http.MethodPost, "/v1/stacks", "admin-t0ken", "application/json", fmt.Sprintf(`{"name": %q}`, stackName))
	require.Equal(t, http.StatusCreated, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &stack))
	return e, cluster, stack, tokenA, tokenB, rootA, rootB
}

// Agents without database credentials, with the codec key set, apply the
// steps of their nodes; a node's token reaches only its own node's step
// data.
func TestAgentsApplyWithACodecKeyAndNoDatabase(t *testing.T) {
	e, cluster, stack, tokenA, tokenB, rootA, rootB := startTwoAgents(t, "agents", "agents")
	pkg := `apiVersion: cairn/v1
kind: File
metadata: {name: control}
spec: {path: control.txt, content: "from the control plane"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: web}
spec: {path: web.txt, content: "web {{ (dep \"File/control\").id }}"}
dependsOn: [File/control]
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: File
metadata: {name: web2}
spec: {path: web2.txt, content: "second"}
target: {roles: [web]}
---
apiVersion: cairn/v1
kind: File
metadata: {name: db}
spec: {path: db.txt, content: "db"}
target: {roles: [db]}
`
	code, body := e.call(http.MethodPost, "/v1/stacks/"+stack.ID+"/apply?wait=true&cluster="+cluster, "admin-t0ken", "application/yaml", pkg)
	require.Equal(t, http.StatusOK, code, body)
	var exec struct {
		ID     string
		Status string
	}
	require.NoError(t, json.Unmarshal([]byte(body), &exec))
	require.Equal(t, string(model.ExecCompleted), exec.Status, body)

	web, err := os.ReadFile(filepath.Join(rootA, "web.txt"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(web), "web "), "web.txt = %q", web)
	assert.Contains(t, string(web), "control.txt", "the agent read its dependency's outputs through the agent API")
	assert.FileExists(t, filepath.Join(rootA, "web2.txt"))
	assert.FileExists(t, filepath.Join(rootB, "db.txt"))
	assert.NoFileExists(t, filepath.Join(rootA, "db.txt"))
	assert.NoFileExists(t, filepath.Join(rootB, "web.txt"))

	data := func(token, kind, key string) (int, string) {
		q := url.Values{"execution": {exec.ID}, "kind": {kind}, "key": {key}}
		return e.call(http.MethodGet, "/v1/agent/data?"+q.Encode(), token, "", "")
	}
	code, _ = data(tokenA, "outputs", "file/web@a1")
	assert.Equal(t, http.StatusOK, code, "a node reads its own step's outputs")
	code, _ = data(tokenA, "outputs", "file/control")
	assert.Equal(t, http.StatusOK, code, "a node reads the outputs of what its steps depend on")
	code, _ = data(tokenA, "before", "file/control")
	assert.Equal(t, http.StatusForbidden, code, "but nothing else of it")
	for _, kind := range []string{"outputs", "before", "step"} {
		code, body = data(tokenA, kind, "file/db@a2")
		assert.Equal(t, http.StatusForbidden, code, "node a1 read %s of a2's step: %s", kind, body)
		code, body = data(tokenB, kind, "file/web@a1")
		assert.Equal(t, http.StatusForbidden, code, "node a2 read %s of a1's step: %s", kind, body)
	}
	code, _ = data(tokenA, "index", "_")
	assert.Equal(t, http.StatusForbidden, code, "the execution's index is not an agent's")
	code, body = e.call(http.MethodPost, "/v1/agent/data?"+url.Values{"execution": {exec.ID}, "kind": {"outputs"}}.Encode(),
		tokenB, "application/json", `{"file/web@a1": "e30="}`)
	assert.Equal(t, http.StatusForbidden, code, "node a2 wrote a1's outputs: %s", body)
	code, _ = data("admin-t0ken", "outputs", "file/web@a1")
	assert.Equal(t, http.StatusUnauthorized, code, "the API token is not a node token")
	code, _ = data(tokenA[:len(tokenA)-2]+"AA", "outputs", "file/web@a1")
	assert.Equal(t, http.StatusUnauthorized, code, "a forged token")

	// A new token revokes the old one.
	e.issue(cluster, "a1")
	code, _ = data(tokenA, "outputs", "file/web@a1")
	assert.Equal(t, http.StatusUnauthorized, code)
}

// An agent whose codec key is not the server's (none, or another) would
// take its node's steps only to fail to open them: it refuses to start,
// saying what to set.
func TestAgentWithoutTheServersCodecKeyRefusesToStart(t *testing.T) {
	cluster := "keys-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	e := startAgentEnv(t, cluster)
	token := e.issue(cluster, "a1")
	for _, tc := range []struct {
		name, key, want string
	}{
		{"no key", "", "the server seals payloads with a codec key (id "},
		{"another key", strings.Repeat("ef", 32), "this agent's codec key (id "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.Values(func(k string) string {
				return map[string]string{
					"CAIRN_TEMPORAL_ADDRESS": e.dev.HostPort,
					"CAIRN_SERVER":           "http://" + e.addr,
					"CAIRN_NODE_TOKEN":       token,
					"CAIRN_CODEC_KEY":        tc.key,
					"CAIRN_NODE_ROOT":        t.TempDir(),
				}[k]
			}))
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			started := false
			err = server.ServeAgent(ctx, cfg, nil, func(*worker.Agent) { started = true; cancel() })
			require.Error(t, err, "the agent served without the server's codec key")
			assert.False(t, started, "the agent polled before refusing")
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "set CAIRN_CODEC_KEY to the server's key")
			assert.Contains(t, err.Error(), "agent for node a1 of cluster "+cluster)
		})
	}
}
