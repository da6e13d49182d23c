package starter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// restartDocs: a config file and a unit file whose change restarts a
// service (a refreshOnly exec counting its runs in a log), and a
// refreshOnly exec nothing ever changes for.
func restartDocs(dir, conf, unit string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: conf}
spec: {path: %[1]s/app.conf, content: %[2]q}
notify: [Exec/restart]
---
apiVersion: cairn/v1
kind: File
metadata: {name: unit}
spec: {path: %[1]s/app.service, content: %[3]q}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: restart}
spec: {command: "echo restart >> %[1]s/restarts.log", refreshOnly: true}
subscribe: [File/unit]
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: idle}
spec: {command: "echo idle >> %[1]s/idle.log", refreshOnly: true}
`, dir, conf, unit)
}

func planStepOf(t *testing.T, p *model.Plan, id string) model.PlanStep {
	t.Helper()
	require.NotNil(t, p)
	for _, s := range p.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("plan has no step %s", id)
	return model.PlanStep{}
}

// Refresh end to end on the dev server, with subscribers in the same unit
// as their sources and in units of their own: a changed config file
// restarts its service exactly once, an unchanged one does not, two
// changed sources still restart once, a refreshOnly exec nothing changed
// for never runs, and a dry-run marks the restart it would make.
func TestApplyRefreshesSubscribers(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, tt := range []struct {
		name  string
		batch int
	}{{"one unit", 0}, {"a unit per step", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			restarts, idle := filepath.Join(dir, "restarts.log"), filepath.Join(dir, "idle.log")
			stack := h.stack("refresh-" + strings.ReplaceAll(tt.name, " ", "-"))
			run := starter.StackRun{BatchSize: tt.batch}

			done := h.apply(stack.ID, restartDocs(dir, "port=80", "[Service]"), run)
			mustStatus(t, done, model.ExecCompleted)
			assert.Equal(t, 1, testenv.CountLines(t, restarts), "created config and unit restart once")
			require.NotNil(t, done.Report)
			assert.Equal(t, 1, done.Report.Refreshed)
			assert.Equal(t, 2, done.Report.Created)
			assert.Equal(t, 1, done.Report.Updated, "the restart ran")

			done = h.apply(stack.ID, restartDocs(dir, "port=80", "[Service]"), run)
			mustStatus(t, done, model.ExecCompleted)
			assert.Equal(t, 1, testenv.CountLines(t, restarts), "nothing changed: no restart")
			assert.Equal(t, 0, done.Report.Refreshed)

			done = h.apply(stack.ID, restartDocs(dir, "port=81", "[Service]"), run)
			mustStatus(t, done, model.ExecCompleted)
			assert.Equal(t, 2, testenv.CountLines(t, restarts), "the changed config restarts once")

			done = h.apply(stack.ID, restartDocs(dir, "port=82", "[Service]\nRestart=always"), run)
			mustStatus(t, done, model.ExecCompleted)
			assert.Equal(t, 3, testenv.CountLines(t, restarts), "two changed sources restart once")
			assert.Equal(t, 1, done.Report.Refreshed)
			assert.Equal(t, 0, testenv.CountLines(t, idle), "a refreshOnly exec nothing changed for never runs")

			plan := h.dryRunWith(stack.ID, restartDocs(dir, "port=83", "[Service]\nRestart=always"), run)
			mustStatus(t, plan, model.ExecCompleted)
			require.NotNil(t, plan.Plan)
			restart := planStepOf(t, plan.Plan, "exec/restart")
			assert.True(t, restart.Refresh)
			assert.Equal(t, model.ActionRun, restart.Action)
			assert.False(t, planStepOf(t, plan.Plan, "exec/idle").Refresh)
			assert.Equal(t, model.ActionNoop, planStepOf(t, plan.Plan, "exec/idle").Action)
			assert.Equal(t, 1, plan.Plan.Summary.Refresh)
			assert.Equal(t, 3, testenv.CountLines(t, restarts), "a dry-run restarts nothing")

			plan = h.dryRunWith(stack.ID, restartDocs(dir, "port=82", "[Service]\nRestart=always"), run)
			assert.False(t, planStepOf(t, plan.Plan, "exec/restart").Refresh, "nothing would change")
			assert.Equal(t, 0, plan.Plan.Summary.Refresh)
		})
	}
}

// A refresh is a run like any other: when a later step fails, the apply
// rolls back and the refreshed exec's undo runs, after the config file it
// was refreshed by is restored.
func TestRefreshIsUndoneOnRollback(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	dir := t.TempDir()
	log := filepath.Join(dir, "service.log")
	docs := func(conf string, fail bool) string {
		smoke := "true"
		if fail {
			smoke = "exit 3"
		}
		return fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: conf}
spec: {path: %[1]s/app.conf, content: %[2]q}
notify: [Exec/restart]
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: restart}
spec: {command: "echo restart >> %[1]s/service.log", undo: "echo undo >> %[1]s/service.log", refreshOnly: true}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: smoke}
spec: {command: %[3]q}
dependsOn: [Exec/restart]
`, dir, conf, smoke)
	}
	stack := h.stack("refresh-rollback")
	mustStatus(t, h.apply(stack.ID, docs("port=80", false), starter.StackRun{}), model.ExecCompleted)
	require.Equal(t, 1, testenv.CountLines(t, log))

	e := h.apply(stack.ID, docs("port=81", true), starter.StackRun{})
	mustStatus(t, e, model.ExecRolledBack)
	require.NotNil(t, e.Report)
	assert.True(t, e.Report.RolledBack)
	assert.Empty(t, e.Report.CompensationFailures)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "restart\nrestart\nundo\n", string(b), "the refresh ran once and was undone")
	conf, err := os.ReadFile(filepath.Join(dir, "app.conf"))
	require.NoError(t, err)
	assert.Equal(t, "port=80", string(conf), "the config file is restored")
}
