package graphe2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/server"
	"github.com/cairn-io/cairn/worker"
)

// The test binary runs itself as `cairn agent` when agentModeEnv is set,
// configured by the same CAIRN_* variables the real agent reads.
const agentModeEnv = "CAIRN_GRAPHE2E_AGENT"

func runAgentProcess() int {
	cfg, err := config.Load(config.Values(os.Getenv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = server.ServeAgent(ctx, cfg, testLogger(), func(a *worker.Agent) {
		fmt.Println("agent ready on", a.Queue)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// agentProc is a running agent process.
type agentProc struct {
	t   testing.TB
	cmd *exec.Cmd
}

// agentAPI serves the API (for its agent routes) over the harness's store,
// once, and returns its URL.
func (h *harness) agentAPI() string {
	h.t.Helper()
	if h.apiURL != "" {
		return h.apiURL
	}
	e, err := api.New(api.Config{}, api.Deps{Store: h.st, Logger: testLogger()})
	require.NoError(h.t, err)
	srv := httptest.NewServer(e)
	h.t.Cleanup(srv.Close)
	h.apiURL = srv.URL
	return h.apiURL
}

// nodeToken issues a token for node and keeps only its hash, as the API
// does.
func (h *harness) nodeToken(node string) string {
	h.t.Helper()
	token, err := agentapi.NewToken(h.cluster, node)
	if err == nil {
		err = h.st.SetNodeTokenHash(context.Background(), h.cluster, node, agentapi.Hash(token))
	}
	require.NoError(h.t, err)
	return token
}

// startAgent runs an agent for node in its own process, rooted in root,
// with a node token and no database settings; env (KEY=VALUE) is added to,
// and overrides, its configuration.
func (h *harness) startAgent(node, root string, env ...string) *agentProc {
	h.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		agentModeEnv+"=1",
		"CAIRN_TEMPORAL_ADDRESS="+h.dev.HostPort,
		"CAIRN_SERVER="+h.agentAPI(),
		"CAIRN_NODE_TOKEN="+h.nodeToken(node),
		"CAIRN_DATABASE_URL=",
		"CAIRN_CLUSTER="+h.cluster,
		"CAIRN_NODE="+node,
		"CAIRN_NODE_ROOT="+root,
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(h.t, err)
	require.NoError(h.t, cmd.Start())
	p := &agentProc{t: h.t, cmd: cmd}
	h.t.Cleanup(p.kill)
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "agent ready") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		require.True(h.t, ok, "agent for %s exited before it was ready", node)
	case <-time.After(30 * time.Second):
		h.t.Fatalf("agent for %s not ready after 30s", node)
	}
	return p
}

// kill ends the agent with SIGKILL and, as a crashed host would, every
// command it had started.
func (p *agentProc) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	testenv.Crash(p.cmd.Process.Pid)
	_ = p.cmd.Wait()
}
