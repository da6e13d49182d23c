package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// runServerAt serves Cairn on dataDir at addr, with the settings extra
// besides the test's, until the returned stop is called (it may be
// called again: the second call does nothing).
func runServerAt(t *testing.T, temporal, dataDir, addr string, extra map[string]string) (stop func()) {
	t.Helper()
	vals := map[string]string{
		"CAIRN_TEMPORAL_ADDRESS":    temporal,
		"CAIRN_DATA_DIR":            dataDir,
		"CAIRN_API_ADDR":            addr,
		"CAIRN_API_TOKEN":           "t0ken",
		"CAIRN_TASK_QUEUE":          "watch-agent-test",
		"CAIRN_HOOKS_ALLOW_PRIVATE": "true",
	}
	maps.Copy(vals, extra)
	cfg, err := config.Load(config.Values(func(k string) string { return vals[k] }))
	require.NoError(t, err)
	_, stop = serve(t, cfg)
	return stop
}

// loopbackAddr is a loopback address nothing listens on.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// watchList asks the agent API, with a node's token, what the node
// watches (the answer at once: since is no version).
func watchList(t *testing.T, addr, token string) agentapi.WatchList {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+agentapi.PathWatch+"?since=", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var l agentapi.WatchList
	require.NoError(t, json.Unmarshal(body, &l))
	return l
}

// postEvents sends a watch events body with token and returns the status.
func postEvents(t *testing.T, addr, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+agentapi.PathWatchEvents, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Files placed on a node served by a `cairn agent` process are watched
// on that node: the server lists them for the agent, the agent watches
// them and reports what changed, and a change behind Cairn's back is
// reported to the stack's hook and repaired there, as on the server's
// own nodes, on a stack of 1,000 files; latencies over 20 changes are
// logged (docs/performance.md). When the server
// restarts the agent asks again and keeps watching; the list follows
// the drift settings, and only the node's token reaches it.
func TestWatchOnAnAgentNode(t *testing.T) {
	dev := testenv.Temporal(t)
	outer := t
	bin := testenv.BuildCairn(t)
	dataDir, root, logs := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	addr := loopbackAddr(t)
	stop := runServerAt(t, dev.HostPort, dataDir, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c, err := client.New("http://"+addr, "t0ken")
	require.NoError(t, err)

	cl, err := c.CreateCluster(ctx, model.ClusterInput{ID: "far", Name: "far", Nodes: []model.Node{
		{ID: "a1", Name: "a1", Roles: []string{"web"}, Mode: model.NodeAgent},
	}})
	require.NoError(t, err)
	tok, err := c.IssueNodeToken(ctx, cl.ID, "a1")
	require.NoError(t, err)
	agent, err := testenv.AgentSpec{Bin: bin, Server: "http://" + addr, Temporal: dev.HostPort, Token: tok.Token,
		Node: "a1", Root: root, Log: filepath.Join(logs, "agent.log")}.Start()
	require.NoError(t, err)
	t.Cleanup(agent.Crash)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the end of the agent's log:\n%s", testenv.Tail(filepath.Join(logs, "agent.log"), 40))
		}
	})

	hook := &driftEvents{}
	hooks := httptest.NewServer(hook)
	t.Cleanup(hooks.Close)
	st, err := c.CreateStack(ctx, model.StackInput{Name: "far-files"})
	require.NoError(t, err)
	_, err = c.PutHooks(ctx, st.ID, []model.Hook{{URL: hooks.URL, Events: []string{model.EventDriftDetected}}})
	require.NoError(t, err)

	const n = 1000
	files := make([]watchedFile, n)
	var pkg strings.Builder
	for i := range files {
		name := fmt.Sprintf("f%04d", i)
		// Named as the hook's events name a resource of a node.
		files[i] = watchedFile{name: name + "@a1", path: filepath.Join(root, "etc", name+".conf"), content: fmt.Sprintf("setting %d\n", i)}
		fmt.Fprintf(&pkg, "---\nkind: File\nmetadata: {name: %s}\nspec: {path: /etc/%s.conf, content: %q, mode: \"0644\"}\ntarget: {roles: [web]}\n", name, name, files[i].content)
	}
	ex, err := c.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg.String()), Format: "yaml"}, client.ApplyOptions{Wait: true, Cluster: cl.ID})
	require.NoError(t, err)
	require.Equal(t, model.ExecCompleted, ex.Status, "apply: %s", ex.Error)
	require.True(t, files[n-1].intact(), "the agent wrote the files in its root")

	assert.Empty(t, watchList(t, addr, tok.Token).Paths, "nothing is watched before the drift settings say so")
	_, err = c.SetDrift(ctx, st.ID, model.DriftSettings{Every: "1h", Repair: true, Watch: true})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(watchList(t, addr, tok.Token).Paths) == n }, time.Minute, 20*time.Millisecond,
		"the node's list holds its watched files")
	l := watchList(t, addr, tok.Token)
	assert.Equal(t, "/etc/f0000.conf", l.Paths[0], "paths as the resources declare them")
	// The stack newly watched is checked whole once; wait for that to end.
	require.Eventually(t, func() bool {
		d, err := c.GetDrift(ctx, st.ID)
		return err == nil && d.LastCheck != nil && !d.LastCheck.Drifted
	}, 2*time.Minute, 20*time.Millisecond)

	changes := []struct {
		name   string
		change func(f watchedFile) error
	}{
		{"content", func(f watchedFile) error { return os.WriteFile(f.path, []byte("changed by hand\n"), 0o644) }},
		{"delete", func(f watchedFile) error { return os.Remove(f.path) }},
		{"mode", func(f watchedFile) error { return os.Chmod(f.path, 0o600) }},
	}
	change := func(t *testing.T, f watchedFile, how int) (reported, repaired time.Duration) {
		t.Helper()
		t0 := time.Now()
		require.NoError(t, changes[how].change(f))
		var rep, fixed time.Time
		for deadline := t0.Add(2 * time.Minute); (rep.IsZero() || fixed.IsZero()) && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if rep.IsZero() {
				rep = hook.reported(f.name, t0)
			}
			if fixed.IsZero() && f.intact() {
				fixed = time.Now()
			}
		}
		require.False(t, rep.IsZero() || fixed.IsZero(), "%s of %s: reported %v, repaired %v", changes[how].name, f.name, !rep.IsZero(), !fixed.IsZero())
		return rep.Sub(t0), fixed.Sub(t0)
	}
	change(t, files[n-1], 0) // warms the agent's worker up; not measured
	var reported, repaired []time.Duration
	for i := range 20 {
		f := files[(i*97)%(n-1)]
		rep, fix := change(t, f, i%len(changes))
		t.Logf("change %d (%-7s of %s on the agent's node): reported in %v, repaired in %v", i+1, changes[i%len(changes)].name, f.name, rep.Round(time.Millisecond), fix.Round(time.Millisecond))
		reported, repaired = append(reported, rep), append(repaired, fix)
	}
	slices.Sort(reported)
	slices.Sort(repaired)
	at := func(d []time.Duration, pct int) time.Duration { return d[(len(d)-1)*pct/100].Round(time.Millisecond) }
	t.Logf("over %d changes on an agent node of a stack of %d files: reported median %v, p90 %v, max %v; repaired median %v, p90 %v, max %v", len(reported), n,
		at(reported, 50), at(reported, 90), at(reported, 100), at(repaired, 50), at(repaired, 90), at(repaired, 100))

	t.Run("only the node's token reaches its list and events, bounded", func(t *testing.T) {
		assert.Equal(t, http.StatusUnauthorized, postEvents(t, addr, "", `{"paths": ["/etc/f001.conf"]}`))
		assert.Equal(t, http.StatusUnauthorized, postEvents(t, addr, "t0ken", `{"paths": ["/etc/f001.conf"]}`), "the API token is not a node's")
		assert.Equal(t, http.StatusBadRequest, postEvents(t, addr, tok.Token, `{"paths": ["/etc/f001.conf"], "stack": "x"}`), "unknown fields")
		many, _ := json.Marshal(agentapi.WatchEvents{Paths: slices.Repeat([]string{"/x"}, agentapi.MaxWatchPaths+1)})
		assert.Equal(t, http.StatusBadRequest, postEvents(t, addr, tok.Token, string(many)), "more paths than a node may watch")
		big := `{"paths": ["` + strings.Repeat("x", agentapi.MaxWatchEventsBytes) + `"]}`
		assert.Equal(t, http.StatusRequestEntityTooLarge, postEvents(t, addr, tok.Token, big))
		assert.Equal(t, http.StatusNoContent, postEvents(t, addr, tok.Token, `{"paths": ["/not/watched"]}`), "a path not watched is ignored")
	})

	t.Run("the agent asks again when the server restarts", func(t *testing.T) {
		require.Eventually(t, func() bool {
			d, err := c.GetDrift(ctx, st.ID)
			return err == nil && d.LastCheck != nil && !d.LastCheck.Drifted
		}, time.Minute, 10*time.Millisecond)
		stop()
		restarted := time.Now()
		runServerAt(outer, dev.HostPort, dataDir, addr, nil)
		// The restarted server checks the stack whole once: what changes
		// after that is seen only if the agent watches for it.
		require.Eventually(t, func() bool {
			d, err := c.GetDrift(ctx, st.ID)
			return err == nil && d.LastCheck != nil && d.LastCheck.CheckedAt.After(restarted) && !d.LastCheck.Drifted
		}, 2*time.Minute, 10*time.Millisecond)
		change(t, files[500], 1)
		change(t, files[501], 0)
	})

	t.Run("the list follows the drift settings", func(t *testing.T) {
		require.NoError(t, c.DeleteDrift(ctx, st.ID))
		require.Eventually(t, func() bool { return len(watchList(t, addr, tok.Token).Paths) == 0 }, time.Minute, 20*time.Millisecond)
		other, err := c.IssueNodeToken(ctx, cl.ID, "a1")
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+agentapi.PathWatch+"?"+url.Values{"since": {""}}.Encode(), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a token replaced by %s… still reads the list", other.Token[:16])
	})
}
