package providers

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/model"
)

// runCheck runs a Fuel test_pre or test_post on the request's node the way
// an exec runs its command: /bin/sh -c in the node's root directory, with
// the node's clean environment, its output bounded, its own timeout
// (model.DefaultCheckTimeout unless it says otherwise) and its whole
// process group stopped when it runs out.
func runCheck(ctx context.Context, node Node, check *model.TaskCheck) (commandResult, error) {
	dir, err := node.WorkDir("")
	if err != nil {
		return commandResult{}, fmt.Errorf("working directory: %w", err)
	}
	timeout := time.Duration(check.Timeout) * time.Second
	if timeout <= 0 {
		timeout = model.DefaultCheckTimeout * time.Second
	}
	return runCommand(ctx, command{
		Argv:    []string{"/bin/sh", "-c", check.Cmd},
		Dir:     dir,
		Env:     commandEnv(node, nil),
		Timeout: timeout,
	})
}

// testPre asks a task's test_pre whether the task is already done on the
// node (exit 0). A dry-run that runs no guards does not run it either.
func testPre(ctx context.Context, req Request) (done bool, err error) {
	if req.TestPre == nil || req.Have != nil || req.Delete || (req.Noop && req.SkipGuards) {
		return false, nil
	}
	res, err := runCheck(ctx, req.Node, req.TestPre)
	if err != nil {
		return false, fmt.Errorf("test_pre: %w", err)
	}
	return res.ExitCode == 0, nil
}

// testPreNote is what a plan says of a test_pre it did not run (a
// dry-run that runs no guards): the task may turn out to be done.
func testPreNote(req Request) string {
	if req.TestPre == nil || !req.Noop || !req.SkipGuards || req.Delete {
		return ""
	}
	return "not run in a dry-run: the task is skipped where it exits 0"
}

// testPost checks a task after its change: a non-zero exit is the task's
// failure, with the end of the check's stderr.
func testPost(ctx context.Context, req Request) error {
	if req.TestPost == nil || req.Noop || req.Delete {
		return nil
	}
	res, err := runCheck(ctx, req.Node, req.TestPost)
	if err != nil {
		return fmt.Errorf("test_post: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("test_post exited %d%s%s", res.ExitCode, cutHint(res), stderrHint(res.Stderr))
	}
	return nil
}

// testPreDone is what Converge returns for a task its test_pre says is
// done: nothing to do, and why.
func testPreDone(title string, noop bool) Change {
	const why = "test_pre exited 0: already done"
	st := State{Exists: true, Outputs: map[string]any{"skipped": why}}
	return Change{Action: model.ActionNoop, Outcome: model.OutcomeUnchanged, Before: st, After: st, Noop: noop,
		Report: title + ": unchanged (" + why + ")"}
}
