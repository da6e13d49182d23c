package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// command is one process to run: exec's commands and guards, external
// provider programs.
type command struct {
	Argv    []string
	Dir     string
	Env     []string // full environment; nil inherits the worker's
	Stdin   []byte
	Timeout time.Duration // 0 = only ctx
}

// commandResult is what a finished process left.
type commandResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// errTimeout marks a process killed because it ran past its timeout.
var errTimeout = errors.New("timed out")

// runCommand runs c in its own process group and kills the whole group on
// timeout or cancellation, so a shell's children do not outlive it. A
// non-zero exit is not an error: it is reported in ExitCode. A command
// killed by cancellation returns an error wrapping the context's cause.
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
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
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
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		res := commandResult{ExitCode: -1, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
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
	res := commandResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
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
