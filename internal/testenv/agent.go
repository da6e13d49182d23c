package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Agent is a `cairn agent` process serving one node.
type Agent struct {
	Node string
	cmd  *exec.Cmd
	done chan struct{}
}

// AgentSpec is how an agent of a node is started, each time alike: the
// cairn binary, the server's URL, Temporal's frontend, the node's token,
// its root; logs go to Log (appended).
type AgentSpec struct {
	Bin, Server, Temporal, Token string
	Node, Root, Log              string
	// Env holds settings besides those (CAIRN_SYSTEMD_ADDRESS, APT_CONFIG).
	Env map[string]string
}

// agentReadyWait bounds how long an agent may take to poll.
const agentReadyWait = time.Minute

// Start runs the agent and returns once it polls its node's queue.
func (a AgentSpec) Start() (*Agent, error) {
	if err := os.MkdirAll(a.Root, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(a.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(a.Bin, "agent")
	vars := map[string]string{
		"CAIRN_SERVER": a.Server, "CAIRN_NODE_TOKEN": a.Token, "CAIRN_NODE_ROOT": a.Root,
		"CAIRN_TEMPORAL_ADDRESS": a.Temporal, "CAIRN_LOG_FORMAT": "json",
	}
	maps.Copy(vars, a.Env)
	cmd.Env = ProcessEnv(filepath.Dir(a.Log), vars)
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
	p := &Agent{Node: a.Node, cmd: cmd, done: make(chan struct{})}
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
		return nil, fmt.Errorf("agent of node %s exited before it polled (%s):\n%s", a.Node, cmd.ProcessState, Tail(a.Log, 10))
	case <-time.After(agentReadyWait):
		p.Crash()
		return nil, fmt.Errorf("agent of node %s did not poll within %s:\n%s", a.Node, agentReadyWait, Tail(a.Log, 10))
	}
}

// Crash ends the agent as a crashed host would: it and every command it
// started, at once.
func (p *Agent) Crash() {
	select {
	case <-p.done:
		return
	default:
	}
	Crash(p.cmd.Process.Pid)
	<-p.done
}

// StartAgents starts specs' agents, a few at a time, and returns them by
// node; on an error the ones started are crashed.
func StartAgents(specs []AgentSpec) (map[string]*Agent, error) {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	out := map[string]*Agent{}
	sem := make(chan struct{}, 8)
	for _, spec := range specs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := spec.Start()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[spec.Node] = p
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, p := range out {
			p.Crash()
		}
		return nil, err
	}
	return out, nil
}

// ProcessEnv is what a process of a test runs with: no setting of the
// developer's, a home and a TMPDIR of its own (dir), and vars.
func ProcessEnv(dir string, vars map[string]string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// Tail is the last lines of a log file, for failure messages.
func Tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
