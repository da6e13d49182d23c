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

// serverProc is one `cairn server` process.
type serverProc struct {
	name   string
	cmd    *exec.Cmd
	client *client.Client
	exited chan struct{}
	// waitErr is the process's exit, once exited is closed.
	waitErr error

	mu  sync.Mutex
	log bytes.Buffer // its log, shown when a test fails
}

// serverEnv is what the servers of one run share: Temporal, the store, the
// task queue.
type serverEnv struct {
	bin, temporal, database, queue string
}

// startServer starts `cairn server` named name: its own data directory, an
// API on a free loopback port, and TMPDIR ending in name, which the
// commands it runs inherit (so a command can say which server ran it). It
// returns once the API answers.
func startServer(t *testing.T, env serverEnv, dir, name string) *serverProc {
	t.Helper()
	tmp := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	cmd := exec.Command(env.bin, "server")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp,
		"CAIRN_TEMPORAL_ADDRESS=" + env.temporal, "CAIRN_DATABASE_URL=" + env.database,
		"CAIRN_TASK_QUEUE=" + env.queue, "CAIRN_DATA_DIR=" + filepath.Join(tmp, "data"),
		"CAIRN_API_ADDR=127.0.0.1:0", "CAIRN_LOG_FORMAT=json", "CAIRN_LOG_LEVEL=info",
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &serverProc{name: name, cmd: cmd, exited: make(chan struct{})}
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
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, s.logText())
		}
	})
	select {
	case a := <-addr:
		s.client, err = client.New("http://"+a, "")
		require.NoError(t, err)
	case <-s.exited:
		t.Fatalf("%s exited before serving: %v\n%s", name, s.waitErr, s.logText())
	case <-time.After(time.Minute):
		t.Fatalf("%s did not serve within a minute:\n%s", name, s.logText())
	}
	return s
}

func (s *serverProc) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}
