package fleete2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
)

// serverProc is a `cairn server` process: its data directory and API
// address stay the same when it restarts, as a server's do.
type serverProc struct {
	t    testing.TB
	bin  string
	dir  string
	addr string
	// workdir is its working directory, where the control plane's
	// commands run.
	workdir string
	vars    map[string]string
	cmd     *exec.Cmd
	done    chan struct{}
	// client reaches the API.
	client *client.Client
	// starts counts the processes started, for their log files.
	starts int
}

// startServer runs `cairn server` on temporal with the defaults but for
// its data directory (under dir), its API address (a free loopback
// port), its task queue and vars, and returns once the API is ready.
func startServer(t testing.TB, bin, dir, temporal string, vars map[string]string) *serverProc {
	t.Helper()
	s := &serverProc{t: t, bin: bin, dir: dir, addr: "127.0.0.1:" + freePort(t), workdir: filepath.Join(dir, "control"), vars: map[string]string{
		"CAIRN_TEMPORAL_ADDRESS": temporal,
		"CAIRN_DATA_DIR":         filepath.Join(dir, "data"),
		"CAIRN_TASK_QUEUE":       "cairn-fleet-" + filepath.Base(dir),
		"CAIRN_LOG_FORMAT":       "json",
	}}
	s.vars["CAIRN_API_ADDR"] = s.addr
	maps.Copy(s.vars, vars)
	require.NoError(t, os.MkdirAll(s.workdir, 0o755))
	var err error
	s.client, err = client.New(s.url(), "")
	require.NoError(t, err)
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("the end of cairn server's log:\n%s", testenv.Tail(s.logPath(), 40))
		}
	})
	s.start()
	return s
}

func (s *serverProc) url() string { return "http://" + s.addr }

func (s *serverProc) start() {
	s.t.Helper()
	s.starts++
	logPath := s.logPath()
	logFile, err := os.Create(logPath)
	require.NoError(s.t, err)
	s.cmd = exec.Command(s.bin, "server")
	s.cmd.Env = testenv.ProcessEnv(s.dir, s.vars)
	s.cmd.Dir = s.workdir
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(s.t, s.cmd.Start())
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}(s.cmd, s.done)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		if err = s.client.Ready(ctx); err == nil {
			return
		}
		select {
		case <-s.done:
			s.t.Fatalf("cairn server exited before it was ready: %s\n%s", s.cmd.ProcessState, testenv.Tail(logPath, 30))
		case <-ctx.Done():
			s.t.Fatalf("cairn server not ready at %s: %v\n%s", s.addr, err, testenv.Tail(logPath, 30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop stops the server as an operator would (SIGTERM: its workers drain
// and hand back what still runs).
func (s *serverProc) stop() {
	s.t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.t.Fatal("cairn server did not stop within a minute of SIGTERM")
	}
}

// restart stops the server and starts it again with vars added to its
// settings.
func (s *serverProc) restart(vars map[string]string) {
	s.t.Helper()
	s.stop()
	maps.Copy(s.vars, vars)
	s.start()
}

func (s *serverProc) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// logPath is the log of the server's latest process.
func (s *serverProc) logPath() string {
	return filepath.Join(s.dir, fmt.Sprintf("server-%d.log", s.starts))
}

// freePort is a loopback port nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
