package failover

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
)

// Server is one `cairn server` process.
type Server struct {
	Name string
	Cmd  *exec.Cmd
	// URL is where its API listens; Client reaches it.
	URL    string
	Client *client.Client
	// Exited is closed once the process exited.
	Exited chan struct{}
	// waitErr is the process's exit, once Exited is closed.
	waitErr error

	mu  sync.Mutex
	log bytes.Buffer // its log, shown when a test fails
}

// Env is what the servers of one run share: the cairn binary, Temporal's
// frontend address, the store's URL, the task queue.
type Env struct {
	Bin, Temporal, Database, Queue string
}

// StartServer starts `cairn server` named name: its own data directory, an
// API on a free loopback port, and TMPDIR ending in name, which the
// commands it runs inherit (so a command can say which server ran it). It
// returns once the API answers.
func StartServer(t *testing.T, env Env, dir, name string) *Server {
	t.Helper()
	tmp := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	cmd := exec.Command(env.Bin, "server")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp,
		"CAIRN_TEMPORAL_ADDRESS=" + env.Temporal, "CAIRN_DATABASE_URL=" + env.Database,
		"CAIRN_TASK_QUEUE=" + env.Queue, "CAIRN_DATA_DIR=" + filepath.Join(tmp, "data"),
		"CAIRN_API_ADDR=127.0.0.1:0", "CAIRN_LOG_FORMAT=json", "CAIRN_LOG_LEVEL=info",
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &Server{Name: name, Cmd: cmd, Exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			s.mu.Lock()
			s.log.Write(line)
			s.log.WriteByte('\n')
			s.mu.Unlock()
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "API listening" {
				addr <- rec.Addr
			}
		}
		s.waitErr = cmd.Wait()
		close(s.Exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-s.Exited
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, s.logText())
		}
	})
	select {
	case a := <-addr:
		s.URL = "http://" + a
		s.Client, err = client.New(s.URL, "")
		require.NoError(t, err)
	case <-s.Exited:
		t.Fatalf("%s exited before serving: %v\n%s", name, s.waitErr, s.logText())
	case <-time.After(time.Minute):
		t.Fatalf("%s did not serve within a minute:\n%s", name, s.logText())
	}
	return s
}

func (s *Server) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}
