package upgrade

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
)

// proc is one process of the test: `cairn server` or `cairn agent` of
// some build, its output in a log file of its own.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startProc starts bin with args and vars, in an environment of its own:
// HOME and TMPDIR are dir/name, so a command it runs can say which
// process ran it (${TMPDIR##*/}). Its output goes to dir/name.log.
func startProc(t *testing.T, dir, name, bin string, vars map[string]string, args ...string) *proc {
	t.Helper()
	home := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(home, 0o700))
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logFile, err := os.Create(p.log)
	require.NoError(t, err)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = home
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home}
	for k, v := range vars {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("the end of %s's log:\n%s", name, testenv.Tail(p.log, 25))
		}
	})
	return p
}

// stop ends the process as a rolling upgrade does: SIGTERM, then its
// exit (its workers stop polling, finish or hand back the steps in flight
// within CAIRN_WORKER_DRAIN).
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not stop within a minute of SIGTERM:\n%s", p.name, testenv.Tail(p.log, 20))
	}
}

func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// waitLog waits until the process's log holds want, failing the test when
// it exits first or after two minutes.
func (p *proc) waitLog(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(p.log)
		if strings.Contains(string(b), want) {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before %q (%s):\n%s", p.name, want, p.cmd.ProcessState, testenv.Tail(p.log, 20))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q within two minutes:\n%s", p.name, want, testenv.Tail(p.log, 20))
		}
	}
}

// server is one `cairn server` slot: its settings stay when a process of
// another build replaces the one serving it.
type server struct {
	slot   string
	vars   map[string]string
	url    string
	client *client.Client
	proc   *proc
}

func newServerSlot(t *testing.T, slot, temporal, database, queue string) *server {
	t.Helper()
	addr := "127.0.0.1:" + freePort(t)
	c, err := client.New("http://"+addr, "")
	require.NoError(t, err)
	return &server{slot: slot, url: "http://" + addr, client: c, vars: map[string]string{
		"CAIRN_TEMPORAL_ADDRESS": temporal, "CAIRN_DATABASE_URL": database, "CAIRN_TASK_QUEUE": queue,
		"CAIRN_API_ADDR": addr, "CAIRN_WORKER_DRAIN": "1s", "CAIRN_LOG_FORMAT": "json",
		// A step its node's agent does not take fails after this long, well
		// within the test's time: a step stranded on a queue no agent
		// polls any more fails the test.
		"CAIRN_NODE_WAIT": "40s",
		"CAIRN_DATA_DIR":  filepath.Join(t.TempDir(), "data"),
	}}
}

// start runs the slot's server with bin (build names it, as in
// "srv-1-old") and returns once its API is ready.
func (s *server) start(t *testing.T, dir, build, bin string) {
	t.Helper()
	s.proc = startProc(t, dir, s.slot+"-"+build, bin, s.vars, "server")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for s.client.Ready(ctx) != nil {
		select {
		case <-s.proc.done:
			t.Fatalf("%s exited before it was ready (%s):\n%s", s.proc.name, s.proc.cmd.ProcessState, testenv.Tail(s.proc.log, 30))
		case <-ctx.Done():
			t.Fatalf("%s not ready within two minutes:\n%s", s.proc.name, testenv.Tail(s.proc.log, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// agent is one `cairn agent` slot: the node it serves, its token and root.
type agent struct {
	node string
	vars map[string]string
	proc *proc
}

// start runs the slot's agent with bin and returns once it polls its
// node's queue.
func (a *agent) start(t *testing.T, dir, build, bin string) {
	t.Helper()
	a.proc = startProc(t, dir, a.node+"-"+build, bin, a.vars, "agent")
	a.proc.waitLog(t, "polling task queue")
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
