package providers

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/cairn-io/cairn/contract"
)

// command is one process to run: exec's commands and guards, external
// provider programs.
type command struct {
	Argv    []string
	Dir     string
	Env     []string // full environment; nil inherits the worker's
	Stdin   []byte
	Timeout time.Duration // 0 = only ctx
	// Stdout and Stderr bound what is kept of each stream (zero: the
	// defaults, outputHead and outputTail).
	Stdout, Stderr streamLimit
	// KillGrace is how long the group has after SIGTERM before SIGKILL
	// (zero: killGrace).
	KillGrace time.Duration
}

// commandResult is what a finished process left. Stdout and Stderr are
// what was kept of each stream: all of it, or its head and tail when the
// middle was cut (StdoutCut and StderrCut say where and how much).
type commandResult struct {
	ExitCode             int
	Stdout               []byte
	Stderr               []byte
	StdoutCut, StderrCut outputCut
}

// killGrace is how long a process group has, by default, after SIGTERM, to
// exit on its own before it is sent SIGKILL.
const killGrace = 5 * time.Second

// errTimeout marks a process killed because it ran past its timeout.
var errTimeout = errors.New("timed out")

// runCommand runs c in its own process group and stops the whole group on
// timeout or cancellation (SIGTERM, then SIGKILL after killGrace, or
// sooner: by the time WithKillBy gives, at once when the attempt lost
// ownership), so a shell's children do not outlive it. Memory is bounded:
// of each stream only a head and a tail are kept. A non-zero exit is not
// an error: it is reported in ExitCode. A command killed by cancellation
// returns an error wrapping the context's cause.
func runCommand(ctx context.Context, c command) (commandResult, error) {
	if len(c.Argv) == 0 {
		return commandResult{}, errors.New("empty command")
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	// Pdeathsig: a command must not outlive a worker that was killed, or a
	// retried step would run it a second time alongside the orphan.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A background child that keeps our pipes open (`daemon &`) must not
	// hold the step until its timeout: stop waiting for output shortly
	// after the command itself exits.
	cmd.WaitDelay = 500 * time.Millisecond
	stdout, stderr := newCapture(c.Stdout), newCapture(c.Stderr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	if err := cmd.Start(); err != nil {
		return commandResult{}, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		grace := killGraceFor(ctx, cmp.Or(c.KillGrace, killGrace))
		if errors.Is(context.Cause(ctx), contract.ErrLostOwnership) {
			// The attempt may be another worker's already: no grace.
			grace = 0
		}
		stopGroup(cmd.Process.Pid, done, grace)
		res := captured(-1, stdout, stderr)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			if c.Timeout > 0 {
				return res, fmt.Errorf("%s: %w after %s", c.Argv[0], errTimeout, c.Timeout)
			}
			return res, fmt.Errorf("%s: %w (deadline of the step)", c.Argv[0], errTimeout)
		}
		// The cause says why: an operator's cancel, or the worker stopping
		// (contract.ErrWorkerStopping), which is no failure of the command.
		return res, fmt.Errorf("%s: killed: %w", c.Argv[0], context.Cause(ctx))
	}
	res := captured(0, stdout, stderr)
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil, errors.Is(waitErr, exec.ErrWaitDelay):
		// Children left running in the background are the command's
		// business (a service it started), so they are not killed.
	case errors.As(waitErr, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	default:
		return res, fmt.Errorf("wait %s: %w", c.Argv[0], waitErr)
	}
	return res, nil
}

// stopGroup stops the process group led by pid: SIGTERM to every member,
// then, once the leader has exited or grace has passed, SIGKILL to
// whatever is left of the group. It returns when the leader was waited for
// (done delivered).
func stopGroup(pid int, done <-chan error, grace time.Duration) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
		// The leader is gone; members that ignored SIGTERM are not.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	case <-timer.C:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}

// captured builds a result from the captured streams.
func captured(code int, stdout, stderr *capture) commandResult {
	res := commandResult{ExitCode: code}
	res.Stdout, res.StdoutCut = stdout.result()
	res.Stderr, res.StderrCut = stderr.result()
	return res
}
