package partition

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	cairnclient "github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/devserver"
	"github.com/cairn-io/cairn/internal/testenv"
)

// proc is a process of the test (a server, an agent) and its log.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
	lines  chan map[string]any // its JSON log records, as they come
}

// start runs cmd, keeping its stderr as its log, and kills it with every
// command it started when the test ends, showing its log if the test
// failed.
func start(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), lines: make(chan map[string]any, 1024)}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.log.Write(sc.Bytes())
			p.log.WriteByte('\n')
			p.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil {
				select {
				case p.lines <- rec:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		testenv.Crash(cmd.Process.Pid)
		<-p.exited
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, p.logText())
		}
	})
	return p
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// await waits for a log record with message msg and returns it.
func (p *proc) await(t *testing.T, msg string, within time.Duration) map[string]any {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case rec := <-p.lines:
			if rec["msg"] == msg {
				return rec
			}
		case <-p.exited:
			t.Fatalf("%s exited before logging %q:\n%s", p.name, msg, p.logText())
		case <-timeout:
			t.Fatalf("%s did not log %q within %s:\n%s", p.name, msg, within, p.logText())
		}
	}
}

// alive reports whether the process still runs.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// freePort is a port free on addr now.
func freePort(t *testing.T, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, ln.Close())
	return port
}

// startTemporal starts a Temporal dev server of its own, stopped when the
// test ends, and returns its frontend's address on the network. Its
// frontend listens on every address: given one address (--ip), the dev
// server (CLI v1.5.1) binds its history and matching services there too
// but dials them on 127.0.0.1, and no workflow starts.
func startTemporal(t *testing.T, n *network) string {
	t.Helper()
	bin, err := testenv.TemporalBinary()
	if err != nil {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("the Temporal CLI is required here (CAIRN_REQUIRE_ALL is set): %v", err)
		}
		t.Skip(err)
	}
	// A port free now may be taken before the dev server binds it, or
	// the ports it derives from it (its HTTP API's, 1,000 above) may be
	// in use: another port is tried, up to three in all.
	var (
		srv  *testsuite.DevServer
		port string
		errs []error
	)
	for attempt := 0; attempt < 3 && srv == nil; attempt++ {
		port = freePort(t, "0.0.0.0")
		var out testenv.SyncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
			ExistingPath: bin, LogLevel: "error", ExtraArgs: devserver.Args(),
			ClientOptions: &client.Options{HostPort: net.JoinHostPort("0.0.0.0", port)},
			Stdout:        io.Discard, Stderr: &out,
		})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("port %s: %w; its errors: %s", port, err, out.String()))
			continue
		}
		srv = s
	}
	require.NotNil(t, srv, "start the Temporal dev server: %v", errs)
	t.Cleanup(func() { _ = srv.Stop() })
	return net.JoinHostPort(n.Addr, port)
}

// cairnServer is a `cairn server` process on the network's address.
type cairnServer struct {
	*proc
	URL    string
	Client *cairnclient.Client
}

// startServer runs `cairn server` on the network's address, with its own
// SQLite store and an API token, in plain HTTP, and returns once its API
// answers.
func startServer(t *testing.T, bin, temporal string, n *network) *cairnServer {
	t.Helper()
	dir := t.TempDir()
	token := "partition-" + n.id
	cmd := exec.Command(bin, "server")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"CAIRN_TEMPORAL_ADDRESS=" + temporal,
		"CAIRN_DATABASE_URL=sqlite://" + filepath.Join(dir, "cairn.db"),
		"CAIRN_DATA_DIR=" + filepath.Join(dir, "data"), "CAIRN_TASK_QUEUE=partition-" + n.id,
		"CAIRN_API_ADDR=" + n.Addr + ":0", "CAIRN_API_TOKEN=" + token,
		// Plain HTTP on the test's own network, beyond loopback: the
		// partition windows measured here are TLS-free.
		"CAIRN_INSECURE_HTTP=true",
		"CAIRN_LOG_FORMAT=json", "CAIRN_LOG_LEVEL=info",
	}
	s := &cairnServer{proc: start(t, "cairn server", cmd)}
	rec := s.await(t, "API listening", time.Minute)
	addr, _ := rec["addr"].(string)
	require.True(t, strings.HasPrefix(addr, n.Addr+":"), "the API listens on %q", addr)
	s.URL = "http://" + addr
	var err error
	s.Client, err = cairnclient.New(s.URL, token)
	require.NoError(t, err)
	return s
}

// startAgent runs `cairn agent` for the node inside the host's namespace,
// reaching Temporal and the server through its veth, and returns once it
// polls.
func startAgent(t *testing.T, bin, temporal string, srv *cairnServer, h *host, cluster, node, token string) *proc {
	t.Helper()
	dir := t.TempDir()
	cmd := h.command(bin, "agent")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"CAIRN_TEMPORAL_ADDRESS=" + temporal, "CAIRN_SERVER=" + srv.URL,
		"CAIRN_NODE_TOKEN=" + token, "CAIRN_CLUSTER=" + cluster, "CAIRN_NODE=" + node,
		"CAIRN_NODE_ROOT=" + filepath.Join(dir, "root"), "CAIRN_INSECURE_HTTP=true",
		"CAIRN_LOG_FORMAT=json", "CAIRN_LOG_LEVEL=info",
	}
	p := start(t, "agent on "+h.Name, cmd)
	p.await(t, "agent polling", time.Minute)
	return p
}

// stop ends a process with SIGTERM, as a service manager does.
func (p *proc) stop() { _ = p.cmd.Process.Signal(syscall.SIGTERM) }
