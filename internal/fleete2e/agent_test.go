package fleete2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-io/cairn/internal/testenv"
)

// agentProc is a `cairn agent` process serving one node.
type agentProc struct {
	node string
	cmd  *exec.Cmd
	done chan struct{}
}

// agentSpec is how an agent of a node is started, each time alike: the
// server, the node's token, its root; logs go to log (appended).
type agentSpec struct {
	bin, server, temporal, token string
	node, root, log              string
}

// agentReadyWait bounds how long an agent may take to poll.
const agentReadyWait = time.Minute

// start runs the agent and returns once it polls its node's queue.
func (a agentSpec) start() (*agentProc, error) {
	if err := os.MkdirAll(a.root, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(a.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(a.bin, "agent")
	cmd.Env = processEnv(filepath.Dir(a.log), map[string]string{
		"CAIRN_SERVER": a.server, "CAIRN_NODE_TOKEN": a.token, "CAIRN_NODE_ROOT": a.root,
		"CAIRN_TEMPORAL_ADDRESS": a.temporal, "CAIRN_LOG_FORMAT": "json",
	})
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &agentProc{node: a.node, cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			fmt.Fprintln(logFile, sc.Text())
			if strings.Contains(sc.Text(), "polling task queue") {
				once()
			}
		}
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("agent of node %s exited before it polled (%s):\n%s", a.node, cmd.ProcessState, tail(a.log, 10))
	case <-time.After(agentReadyWait):
		p.crash()
		return nil, fmt.Errorf("agent of node %s did not poll within %s:\n%s", a.node, agentReadyWait, tail(a.log, 10))
	}
}

// crash ends the agent as a crashed host would: it and every command it
// started, at once.
func (p *agentProc) crash() {
	select {
	case <-p.done:
		return
	default:
	}
	testenv.Crash(p.cmd.Process.Pid)
	<-p.done
}

// startAgents starts specs' agents, a few at a time, and returns them by
// node; on an error the ones started are crashed.
func startAgents(specs []agentSpec) (map[string]*agentProc, error) {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	out := map[string]*agentProc{}
	sem := make(chan struct{}, 8)
	for _, spec := range specs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := spec.start()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[spec.node] = p
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, p := range out {
			p.crash()
		}
		return nil, err
	}
	return out, nil
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
