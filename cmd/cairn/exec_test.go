package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// guardedPackage writes a file, then runs a command that fails until flag
// exists.
func guardedPackage(root, flag string) string {
	return `apiVersion: cairn/v1
kind: File
metadata: {name: note}
spec: {path: ` + root + `/note, content: hi}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: check}
spec: {command: "test -f ` + flag + `"}
dependsOn: [File/note]
`
}

func TestExecCommands(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	flag := s.path("flag")
	pkg := s.file("guarded.yaml", guardedPackage(root, flag))

	// A failed apply, rolled back.
	failed := strings.TrimSpace(s.run("apply", "--stack", id, pkg, "--wait=false").expect(t, 0).stdout)
	s.waitExecution(failed, "finished", (*model.Execution).Finished)

	t.Run("show", func(t *testing.T) {
		r := s.run("exec", "show", failed).expect(t, 0)
		r.has(t, "ID:", failed, "Kind:", "apply", "Status:", "rolled_back", "Target:", "stack "+id,
			"Report:", "1 failed", "STEP", "NODE", "ACTION", "STATUS", "ATTEMPTS", "exec/check", "file/note", "rolled_back")
		var ex model.Execution
		out := s.run("exec", "show", failed, "-o", "json").expect(t, 0).stdout
		err := json.Unmarshal([]byte(out), &ex)
		require.NoError(t, err, "exec show -o json: %v\n%s", err, out)
		require.Equal(t, failed, ex.ID, "exec show -o json: %v\n%s", err, out)
		require.Len(t, ex.Steps, 2, "exec show -o json: %v\n%s", err, out)
		require.NotNil(t, ex.Report, "exec show -o json: %v\n%s", err, out)
		require.Equal(t, 1, ex.Report.Failed, "exec show -o json: %v\n%s", err, out)
		s.run("exec", "show", "stack-nope.0197a2c4-0000-7000-8000-000000000000").expect(t, 1).hasErr(t, "404")
	})

	t.Run("watch a finished execution", func(t *testing.T) {
		s.run("exec", "watch", failed).expect(t, 1).has(t, "Apply failed and was rolled back", "exec/check")
	})

	var retried string
	t.Run("retry", func(t *testing.T) {
		require.NoError(t, os.WriteFile(flag, nil, 0o644))
		r := s.run("exec", "retry", failed).expect(t, 0)
		retried = strings.TrimSpace(r.stdout)
		require.NotEmpty(t, retried, "retry should print the new execution id:\n%s", r.stdout)
		require.NotEqual(t, failed, retried, "retry should print the new execution id:\n%s", r.stdout)
		require.NotContains(t, retried, "\n", "retry should print the new execution id:\n%s", r.stdout)
		r = s.run("exec", "watch", retried).expect(t, 0)
		r.has(t, "created file/note", "ran exec/check", "Apply completed")
		ex := s.execution(retried)
		require.Equal(t, failed, ex.RetryOf, "retry of")
		// A completed execution cannot be retried.
		s.run("exec", "retry", retried).expect(t, 1).hasErr(t, "409")
	})

	t.Run("list", func(t *testing.T) {
		var list model.ExecutionList
		deadline := time.Now().Add(30 * time.Second)
		for {
			out := s.run("exec", "list", "--stack", "web", "-o", "json").expect(t, 0).stdout
			err := json.Unmarshal([]byte(out), &list)
			require.NoError(t, err, "exec list -o json: %v\n%s", err, out)
			if len(list.Executions) >= 2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		ids := map[string]bool{}
		for _, e := range list.Executions {
			ids[e.ID] = true
			require.Equal(t, id, e.StackID, "--stack filter let through %+v", e)
		}
		require.True(t, ids[failed], "list = %v, want %s and %s", ids, failed, retried)
		require.True(t, ids[retried], "list = %v, want %s and %s", ids, failed, retried)
		// Listing reads Temporal's visibility store, which records an
		// execution's close shortly after the close itself.
		var table string
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			table = s.run("exec", "list", "--stack", id, "--status", "completed").expect(t, 0).stdout
			if strings.Contains(table, retried) || time.Now().After(deadline) {
				break
			}
		}
		require.Contains(t, table, retried, "exec list --status completed")
		require.NotContains(t, table, failed, "exec list --status completed")
		require.True(t, strings.HasPrefix(table, "ID"), "exec list --status completed:\n%s", table)
		out := s.run("exec", "list", "--stack", id, "--kind", "apply", "-o", "yaml").expect(t, 0).stdout
		var y struct {
			Executions []struct {
				ID   string `yaml:"id"`
				Kind string `yaml:"kind"`
			} `yaml:"executions"`
		}
		err := yaml.Unmarshal([]byte(out), &y)
		require.NoError(t, err, "exec list -o yaml: %v\n%s", err, out)
		require.GreaterOrEqual(t, len(y.Executions), 2, "exec list -o yaml: %v\n%s", err, out)
		require.Equal(t, "apply", y.Executions[0].Kind, "exec list -o yaml: %v\n%s", err, out)
		s.run("exec", "list", "--status", "sleeping").expect(t, 1).hasErr(t, "400", "status")
	})

	t.Run("cancel", func(t *testing.T) {
		other := s.stack("slow")
		slow := s.file("slow.yaml", "apiVersion: cairn/v1\nkind: Exec\nmetadata: {name: nap}\nspec: {command: sleep 60}\n")
		exID := strings.TrimSpace(s.run("apply", "--stack", other, slow, "--wait=false").expect(t, 0).stdout)
		s.waitExecution(exID, "running its step", func(ex *model.Execution) bool {
			return len(ex.Steps) == 1 && ex.Steps[0].Status == model.StatusRunning
		})
		s.run("exec", "cancel", exID).expect(t, 0).has(t, "cancel requested for "+exID)
		r := s.run("exec", "watch", exID).expect(t, 1)
		r.has(t, "Apply was canceled")
		s.run("exec", "cancel", exID).expect(t, 1).hasErr(t, "409")
	})

	t.Run("decide", func(t *testing.T) {
		other := s.stack("paused")
		proot := s.path("paused")
		require.NoError(t, os.Mkdir(proot, 0o755))
		pflag := s.path("paused-flag")
		ppkg := s.file("paused.yaml", guardedPackage(proot, pflag))
		exID := strings.TrimSpace(s.run("apply", "--stack", other, ppkg, "--wait=false", "--on-failure", "pause").expect(t, 0).stdout)
		s.waitExecution(exID, "waiting", func(ex *model.Execution) bool { return ex.Status == model.ExecWaiting })
		// The watch of a waiting execution says how to decide.
		show := s.run("exec", "show", exID).expect(t, 0)
		show.has(t, "waiting", "exec/check")

		s.run("exec", "decide", exID, "--action", "maybe").expect(t, 1).hasErr(t, "--action \"maybe\"")
		// Fix the cause, then retry the step.
		require.NoError(t, os.WriteFile(pflag, nil, 0o644))
		// A watch follows the waiting execution through the decision.
		watched := make(chan cliResult, 1)
		go func() { watched <- runCairn(t, "exec", "watch", exID, "--server", s.url) }()
		time.Sleep(500 * time.Millisecond)
		s.run("exec", "decide", exID, "--action", "retry").expect(t, 0).has(t, "exec/check: retry")
		r := <-watched
		r.expect(t, 0).has(t, "waiting exec/check", "decide with: cairn exec decide "+exID+" --step exec/check", "ran exec/check", "Apply completed")
		require.True(t, regexp.MustCompile(`(?m)^\s+failed:\s+0$`).MatchString(r.stdout), "report:\n%s", r.stdout)
		s.run("exec", "decide", exID, "--action", "skip", "-o", "json").expect(t, 1).hasErr(t, "409")
	})

	t.Run("decide several", func(t *testing.T) {
		other := s.stack("fleet")
		flag := s.path("fleet-flag")
		var pkg strings.Builder
		for _, n := range []string{"a", "b", "c"} {
			// A timeout of its own makes each step a unit of its own.
			fmt.Fprintf(&pkg, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: %s}\nspec: {command: \"test -f %s\"}\nmeta: {timeout: 60}\n", n, flag)
		}
		exID := strings.TrimSpace(s.run("apply", "--stack", other, s.file("fleet.yaml", pkg.String()), "--wait=false", "--on-failure", "pause").expect(t, 0).stdout)
		s.waitExecution(exID, "three steps waiting", func(ex *model.Execution) bool {
			return ex.Status == model.ExecWaiting && ex.Progress != nil && len(ex.Progress.Waiting) == 3
		})
		s.run("exec", "decide", exID, "retry", "--action", "skip").expect(t, 1).hasErr(t, `action "retry" and --action "skip" disagree`)
		s.run("exec", "decide", exID, "retry", "--step", "exec/a", "--all").expect(t, 1).hasErr(t, "--step or --all")
		s.run("exec", "decide", exID, "retry", "--step", "exec/a", "--step", "exec/nope").expect(t, 1).
			hasErr(t, "409", `step "exec/nope" is not waiting`)
		require.NoError(t, os.WriteFile(flag, nil, 0o644))
		s.run("exec", "decide", exID, "retry", "--step", "exec/c", "--step", "exec/a").expect(t, 0).
			has(t, "exec/a: retry\nexec/c: retry\n")
		s.run("exec", "decide", exID, "skip", "--all", "-o", "json").expect(t, 0).
			has(t, `"steps": [`, `"exec/b"`, `"scope": "steps"`)
		s.run("exec", "watch", exID).expect(t, 0).has(t, "Apply completed")
	})
}

// TestExecShowStepOutput: exec show prints what a step's program printed
// (its output change) under the step's id.
func TestExecShowStepOutput(t *testing.T) {
	ex := &model.Execution{ID: "e1", Kind: model.ExecApply, Status: model.ExecCompleted, Steps: []model.StepProgress{
		{ID: "external/www-vm", Kind: "external", Name: "www-vm", Status: model.StatusSucceeded,
			Changes: []model.AttrChange{{Path: "config", New: "x"}, {Path: model.OutputChange, New: "[create]\ncreating www-vm\n"}}},
		{ID: "file/motd", Kind: "file", Name: "motd", Status: model.StatusSucceeded},
	}}
	var b strings.Builder
	require.NoError(t, executionDetails(&b, ex))
	assert.Contains(t, b.String(), "\nOutput of external/www-vm:\n  [create]\n  creating www-vm\n")
	assert.NotContains(t, b.String(), "Output of file/motd")
}

// TestExecShowUnknownStep: exec show says a step's outcome is unknown
// and, while the execution waits, how to decide.
func TestExecShowUnknownStep(t *testing.T) {
	tests := []struct {
		status   model.ExecutionStatus
		wantHint bool
	}{
		{status: model.ExecWaiting, wantHint: true},
		{status: model.ExecFailed},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			ex := &model.Execution{ID: "e1", Kind: model.ExecApply, Status: tt.status, Steps: []model.StepProgress{
				{ID: "exec/migrate", Kind: "exec", Name: "migrate", Action: model.ActionRun, Status: model.StatusUnknown, Error: model.UnknownMessage},
				{ID: "file/motd", Kind: "file", Name: "motd", Status: model.StatusSucceeded},
			}}
			if tt.status == model.ExecFailed {
				ex.Report = &model.Report{Created: 1, Unknown: 1, Failures: []model.StepError{{Step: "exec/migrate", Error: model.UnknownMessage}}}
			}
			var b strings.Builder
			require.NoError(t, executionDetails(&b, ex))
			out := b.String()
			assert.Contains(t, out, "exec/migrate is unknown: the command may or may not have run")
			assert.NotContains(t, out, "file/motd is unknown")
			assert.Equal(t, tt.wantHint, strings.Contains(out, "cairn exec decide e1 --step exec/migrate --action retry|skip|rollback|abort"), out)
			if tt.status == model.ExecFailed {
				assert.Contains(t, out, "1 unknown")
			}
		})
	}
}
