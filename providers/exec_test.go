package providers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// runCount is how many times the test command ran (one line each).
func runCount(t *testing.T, root string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "runs"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

func TestExecGuards(t *testing.T) {
	ctx := context.Background()
	const cmd = "echo run >> runs"
	tests := []struct {
		name       string
		setup      func(t *testing.T, root string)
		spec       model.Spec
		wantRun    bool
		wantReason string
	}{
		{name: "no guard runs", spec: model.Spec{"command": cmd}, wantRun: true},
		{name: "creates absent runs", spec: model.Spec{"command": cmd, "creates": "/done"}, wantRun: true},
		{name: "creates present skips", setup: func(t *testing.T, root string) { mustWrite(t, filepath.Join(root, "done"), nil, 0o644) },
			spec: model.Spec{"command": cmd, "creates": "/done"}, wantReason: "creates /done exists"},
		{name: "unless exit 0 skips", spec: model.Spec{"command": cmd, "unless": "true"}, wantReason: "unless exited 0"},
		{name: "unless exit 1 runs", spec: model.Spec{"command": cmd, "unless": "test -e flag"}, wantRun: true},
		{name: "unless as argv", setup: func(t *testing.T, root string) { mustWrite(t, filepath.Join(root, "flag"), nil, 0o644) },
			spec: model.Spec{"command": cmd, "unless": []any{"test", "-e", "flag"}}, wantReason: "unless exited 0"},
		{name: "onlyif exit 0 runs", spec: model.Spec{"command": cmd, "onlyif": "true"}, wantRun: true},
		{name: "onlyif exit 3 skips", spec: model.Spec{"command": cmd, "onlyif": "exit 3"}, wantReason: "onlyif exited 3"},
		{name: "all guards pass", spec: model.Spec{"command": cmd, "creates": "/done", "unless": "false", "onlyif": "true"}, wantRun: true},
		{name: "creates wins before commands", setup: func(t *testing.T, root string) { mustWrite(t, filepath.Join(root, "done"), nil, 0o644) },
			spec: model.Spec{"command": cmd, "creates": "done", "onlyif": "echo guard >> runs"}, wantReason: "creates done exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			if tt.setup != nil {
				tt.setup(t, node.Root)
			}
			req := Request{Kind: "exec", Name: "job", Node: node, Spec: tt.spec}
			// Noop evaluates the guards but never runs the command.
			noop := req
			noop.Noop = true
			nch, err := r.Converge(ctx, noop)
			require.NoError(t, err)
			wantAction := model.ActionNoop
			if tt.wantRun {
				wantAction = model.ActionRun
			}
			require.Equal(t, wantAction, nch.Action, "noop: %+v, runs %d", nch, runCount(t, node.Root))
			require.Equal(t, model.OutcomeUnchanged, nch.Outcome, "noop: %+v, runs %d", nch, runCount(t, node.Root))
			require.Equal(t, 0, runCount(t, node.Root), "noop: %+v, runs %d", nch, runCount(t, node.Root))
			ch, err := r.Converge(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, wantAction, ch.Action, "action")
			wantRuns := 0
			if tt.wantRun {
				wantRuns = 1
				require.Equal(t, model.OutcomeUpdated, ch.Outcome, "ran: %+v", ch)
				require.Equal(t, int64(0), ch.After.Outputs["exitCode"], "ran: %+v", ch)
				assert.Equal(t, "exec/job: ran (exit 0)", ch.Report, "ran: %+v", ch)
			} else {
				require.Equal(t, model.OutcomeUnchanged, ch.Outcome, "skipped: outcome %q report %q", ch.Outcome, ch.Report)
				assert.Equal(t, "exec/job: unchanged ("+tt.wantReason+")", ch.Report, "skipped: outcome %q report %q", ch.Outcome, ch.Report)
			}
			got := runCount(t, node.Root)
			assert.Equal(t, wantRuns, got, "command ran %d times, want %d", got, wantRuns)
		})
	}
}

func TestExecCreatesMakesItIdempotent(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	req := Request{Kind: "exec", Name: "init", Node: node, Spec: model.Spec{"command": "echo run >> runs && touch initialized", "creates": "/initialized"}}
	for i := range 3 {
		_, err := r.Converge(ctx, req)
		require.NoError(t, err, "converge %d: %v", i, err)
	}
	got := runCount(t, node.Root)
	assert.Equal(t, 1, got, "ran %d times, want once", got)
}

func TestExecReturnsAndOutputs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		spec     model.Spec
		wantErr  string
		wantCode int64
		wantOut  string
	}{
		{name: "exit 0", spec: model.Spec{"command": "echo out; echo err >&2"}, wantCode: 0, wantOut: "out\n"},
		{name: "exit 3 refused by default", spec: model.Spec{"command": "echo broke >&2; exit 3"}, wantErr: "exited 3 (accepted [0]): broke"},
		{name: "exit 3 accepted", spec: model.Spec{"command": "exit 3", "returns": []any{0, 3}}, wantCode: 3},
		{name: "single accepted code", spec: model.Spec{"command": "exit 2", "returns": 2}, wantCode: 2},
		{name: "exit 0 not accepted", spec: model.Spec{"command": "true", "returns": []any{1}}, wantErr: "exited 0"},
		{name: "argv without a shell", spec: model.Spec{"argv": []any{"printf", "%s|%s", "a b", "$HOME"}}, wantOut: "a b|$HOME"},
		{name: "missing program", spec: model.Spec{"argv": []any{"/nonexistent/program"}}, wantErr: "start /nonexistent/program"},
		{name: "cwd missing", spec: model.Spec{"command": "true", "cwd": "/nope"}, wantErr: "cwd /nope is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			ch, err := r.Converge(ctx, Request{Kind: "exec", Name: "x", Node: node, Spec: tt.spec})
			if tt.wantErr != "" {
				require.Error(t, err, "err %v outcome %q; want failed with %q", err, ch.Outcome, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "err %v outcome %q; want failed with %q", err, ch.Outcome, tt.wantErr)
				require.Equal(t, model.OutcomeFailed, ch.Outcome, "err %v outcome %q; want failed with %q", err, ch.Outcome, tt.wantErr)
				if strings.Contains(tt.wantErr, "exited") {
					assert.NotNil(t, ch.After.Outputs["exitCode"], "failed run lost its exit code: %+v", ch.After)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCode, ch.After.Outputs["exitCode"], "exitCode")
			assert.False(t, tt.wantOut != "" && ch.After.Outputs["stdout"] != tt.wantOut, "stdout %q, want %q", ch.After.Outputs["stdout"], tt.wantOut)
		})
	}
}

func TestExecEnvironmentAndCwd(t *testing.T) {
	ctx := context.Background()
	t.Setenv("CAIRN_WORKER_SECRET", "do-not-leak")
	r := localRegistry(t)
	node := localNode(t)
	mustMkdir(t, filepath.Join(node.Root, "srv"))
	tests := []struct {
		name string
		spec model.Spec
		want string
	}{
		{"default cwd is the node root", model.Spec{"command": "pwd -P"}, mustEval(t, node.Root) + "\n"},
		{"cwd resolves inside the root", model.Spec{"command": "pwd -P", "cwd": "/srv"}, mustEval(t, filepath.Join(node.Root, "srv")) + "\n"},
		{"worker env does not leak", model.Spec{"command": `echo "[$CAIRN_WORKER_SECRET]"`}, "[]\n"},
		{"spec env as object", model.Spec{"command": `echo "$A-$B"`, "env": map[string]any{"A": "x", "B": 2}}, "x-2\n"},
		{"spec env as list", model.Spec{"command": `echo "$A"`, "env": []any{"A=y=z"}}, "y=z\n"},
		{"node variables", model.Spec{"command": `echo "$CAIRN_NODE $CAIRN_NODE_ROOT $HOME"`}, "node-1 " + node.Root + " " + node.Root + "\n"},
		{"PATH is set", model.Spec{"command": `test -n "$PATH" && echo ok`}, "ok\n"},
	}
	for _, tt := range tests {
		ch, err := r.Converge(ctx, Request{Kind: "exec", Name: "x", Node: node, Spec: tt.spec})
		if !assert.NoError(t, err, tt.name) {
			continue
		}
		assert.Equal(t, tt.want, ch.After.Outputs["stdout"], "%s: stdout", tt.name)
	}
	for _, cwd := range []string{"../..", "/../.."} {
		_, err := r.Converge(ctx, Request{Kind: "exec", Name: "x", Node: node, Spec: model.Spec{"command": "true", "cwd": cwd}})
		assert.True(t, IsConfigError(err), "cwd %q: %v, want a ConfigError", cwd, err)
	}
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(node.Root, "out"))
	_, err := r.Converge(ctx, Request{Kind: "exec", Name: "x", Node: node, Spec: model.Spec{"command": "touch pwned", "cwd": "/out"}})
	assert.True(t, IsConfigError(err), "cwd through a symlink out of the root: %v", err)
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries, "command ran outside the root")
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return real
}

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	start := time.Now()
	ch, err := r.Converge(context.Background(), Request{Kind: "exec", Name: "slow", Node: node, Spec: model.Spec{
		"command": "sleep 60 & echo $! > child.pid; wait", "timeout": "1s",
	}})
	require.Error(t, err, "err %v outcome %q; want a timeout failure", err, ch.Outcome)
	require.ErrorIs(t, err, errTimeout, "err %v outcome %q; want a timeout failure", err, ch.Outcome)
	require.Equal(t, model.OutcomeFailed, ch.Outcome, "err %v outcome %q; want a timeout failure", err, ch.Outcome)
	elapsed := time.Since(start)
	require.LessOrEqual(t, elapsed, 30*time.Second, "converge returned after %v: the timeout did not stop the command", elapsed)
	raw, err := os.ReadFile(filepath.Join(node.Root, "child.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	// The background child must be gone (a zombie awaiting its reaper counts
	// as gone: it no longer runs).
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		require.False(t, time.Now().After(deadline), "background child %d still running after the timeout", pid)
		time.Sleep(20 * time.Millisecond)
	}
}

func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func TestExecUndoAndIrreversible(t *testing.T) {
	ctx := context.Background()
	t.Run("undo compensates a run", func(t *testing.T) {
		r := localRegistry(t)
		node := localNode(t)
		req := Request{Kind: "exec", Name: "svc", Node: node, Spec: model.Spec{
			"command": "echo on > state", "undo": []any{"sh", "-c", "echo off > state"}, "creates": "/never",
		}}
		ch, err := r.Converge(ctx, req)
		require.NoError(t, err, "converge: %v irreversible=%v", err, ch.Irreversible)
		require.False(t, ch.Irreversible, "converge: %v irreversible=%v", err, ch.Irreversible)
		for range 2 { // undo runs again harmlessly: compensation is retried
			require.NoError(t, r.Compensate(ctx, req, jsonRoundTrip(t, ch)))
		}
		got, _ := os.ReadFile(filepath.Join(node.Root, "state"))
		assert.Equal(t, "off\n", string(got), "state %q after undo", got)
	})
	t.Run("failing undo is an error", func(t *testing.T) {
		r := localRegistry(t)
		node := localNode(t)
		req := Request{Kind: "exec", Name: "svc", Node: node, Spec: model.Spec{"command": "true", "undo": "echo nope >&2; exit 4"}}
		ch, err := r.Converge(ctx, req)
		require.NoError(t, err)
		err = r.Compensate(ctx, req, ch)
		require.Error(t, err, "compensate")
		assert.Contains(t, err.Error(), "undo exited 4: nope", "compensate: %v", err)
	})
	t.Run("no undo is irreversible", func(t *testing.T) {
		r := localRegistry(t)
		node := localNode(t)
		req := Request{Kind: "exec", Name: "migrate", Node: node, Spec: model.Spec{"command": "echo run >> runs"}}
		noop := req
		noop.Noop = true
		nch, _ := r.Converge(ctx, noop)
		assert.True(t, nch.Irreversible, "noop plan does not warn the run is irreversible")
		ch, err := r.Converge(ctx, req)
		require.NoError(t, err, "converge: %v irreversible=%v", err, ch.Irreversible)
		require.True(t, ch.Irreversible, "converge: %v irreversible=%v", err, ch.Irreversible)
		err = r.Compensate(ctx, req, jsonRoundTrip(t, ch))
		assert.ErrorIs(t, err, ErrIrreversible, "compensate: %v, want ErrIrreversible", err)
		assert.Equal(t, 1, runCount(t, node.Root), "compensation re-ran the command")
	})
	t.Run("a skipped exec needs no compensation", func(t *testing.T) {
		r := localRegistry(t)
		node := localNode(t)
		req := Request{Kind: "exec", Name: "migrate", Node: node, Spec: model.Spec{"command": "true", "unless": "true"}}
		ch, err := r.Converge(ctx, req)
		require.NoError(t, err, "converge: %v %+v", err, ch)
		require.False(t, ch.Irreversible, "converge: %v %+v", err, ch)
		assert.NoError(t, r.Compensate(ctx, req, ch), "compensate")
	})
	t.Run("deleting an exec does nothing", func(t *testing.T) {
		r := localRegistry(t)
		node := localNode(t)
		ch, err := r.Converge(ctx, Request{Kind: "exec", Name: "gone", Node: node, Delete: true})
		require.NoError(t, err, "delete: %v %+v", err, ch)
		assert.Equal(t, model.OutcomeUnchanged, ch.Outcome, "delete: %v %+v", err, ch)
	})
}

func TestExecCancellation(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Converge(ctx, Request{Kind: "exec", Name: "x", Node: node, Spec: model.Spec{"command": "sleep 60"}})
	require.Error(t, err, "err %v, want a retryable failure", err)
	assert.False(t, IsConfigError(err), "err %v, want a retryable failure", err)
	assert.LessOrEqual(t, time.Since(start), 30*time.Second, "cancellation did not stop the command")
}
