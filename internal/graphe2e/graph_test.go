package graphe2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

func TestMergePrecedenceFieldOverridesAndSkippedEdges(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "deploy", `
- id: first
  type: shell
  roles: [compute]
  parameters: {cmd: "`+timed("first", "sleep 0.4")+`"}
- id: noisy
  type: shell
  roles: [compute]
  requires: [first]
  parameters: {cmd: "echo noisy > noisy.txt"}
- id: after-noisy
  type: shell
  roles: [compute]
  requires: [noisy]
  parameters: {cmd: "`+timed("after-noisy", "true")+`"}
- id: write
  type: upload_file
  roles: [compute]
  condition: 'eq .node.name "n2"'
  parameters: {path: merged.txt, data: from release, mode: "0600"}
`)
	// The cluster overrides one parameter and removes the condition; the
	// plugin, of most importance, widens the roles, disables noisy and adds
	// a task.
	h.putGraph(model.LayerCluster, "", "deploy", `
- id: write
  condition: null
  parameters: {data: from cluster}
`)
	h.putGraph(model.LayerPlugin, "plug", "deploy", `
- id: write
  roles: ["*"]
- id: noisy
  type: skipped
- id: plugin-task
  type: shell
  roles: [controller]
  parameters: {cmd: "echo plugin > plugin.txt"}
`)
	e := h.run(contract.GraphRequest{Types: []string{"deploy"}})
	mustStatus(t, e, model.ExecCompleted)

	for _, n := range []string{"n1", "n2", "n3"} {
		path := filepath.Join(h.root(n), "merged.txt")
		if got := readFile(t, path); got != "from cluster" {
			t.Errorf("%s: merged.txt = %q, want the cluster's data on every node (plugin roles, no condition)", n, got)
		}
		if fi, err := osStat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: merged.txt mode %v, %v; want the release's 0600 kept", n, fi, err)
		}
		if exists(filepath.Join(h.root(n), "noisy.txt")) {
			t.Errorf("%s: the skipped task noisy ran", n)
		}
	}
	for _, n := range []string{"n2", "n3"} {
		first, after := h.interval(n, h.root(n), "first"), h.interval(n, h.root(n), "after-noisy")
		if after.start < first.end {
			t.Errorf("%s: after-noisy started before first ended: the edge through skipped noisy was lost", n)
		}
		if s := stepStatus(e, "noisy@"+n); s == model.StatusFailed || s == model.StatusDepFailed {
			t.Errorf("noisy@%s is %s", n, s)
		}
	}
	if !exists(filepath.Join(h.root("n1"), "plugin.txt")) || exists(filepath.Join(h.root("n2"), "plugin.txt")) {
		t.Error("the plugin's task should run on the controller only")
	}
	if e.Report == nil || e.Report.Skipped != 2 {
		t.Fatalf("report %+v, want noisy skipped on two nodes", e.Report)
	}
}

func TestNodeSubset(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: mark
  type: shell
  roles: ["*"]
  parameters: {cmd: "echo ran > mark.txt"}
- id: stage-end
  type: stage
`)
	e := h.run(contract.GraphRequest{Nodes: []string{"n2"}})
	mustStatus(t, e, model.ExecCompleted)
	if !exists(filepath.Join(h.root("n2"), "mark.txt")) {
		t.Fatal("mark did not run on n2")
	}
	for _, n := range []string{"n1", "n3"} {
		if exists(filepath.Join(h.root(n), "mark.txt")) {
			t.Errorf("mark ran on %s, outside the node subset", n)
		}
	}
	for _, s := range e.Steps {
		if s.Node != "" && s.Node != "n2" {
			t.Errorf("step %s exists on node %s outside the subset", s.ID, s.Node)
		}
	}
}

func TestTaskSubsetKeepsEdges(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: a
  type: shell
  roles: [compute]
  parameters: {cmd: "`+timed("a", "sleep 0.3")+`"}
- id: b
  type: shell
  roles: [compute]
  requires: [a]
  parameters: {cmd: "`+timed("b", "true")+`"}
- id: c
  type: shell
  roles: [compute]
  requires: [b]
  parameters: {cmd: "`+timed("c", "true")+`"}
`)
	e := h.run(contract.GraphRequest{Tasks: []string{"a", "c"}})
	mustStatus(t, e, model.ExecCompleted)
	for _, n := range []string{"n2", "n3"} {
		if exists(filepath.Join(h.root(n), "b.start")) {
			t.Errorf("%s: b ran though it is not in the task subset", n)
		}
		a, c := h.interval(n, h.root(n), "a"), h.interval(n, h.root(n), "c")
		if c.start < a.end {
			t.Errorf("%s: c started before a ended: the edge through unselected b was lost", n)
		}
	}
	if e.Report == nil || e.Report.Skipped != 2 {
		t.Fatalf("report %+v, want b skipped on both computes", e.Report)
	}
}

func TestCrossNodeDependencies(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	// app on n3 is slow; lb needs any one app (policy any), db before every
	// app (policy all).
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: db
  type: shell
  roles: [controller]
  parameters: {cmd: "`+timed("db", "sleep 0.5")+`"}
- id: app
  type: shell
  roles: [compute]
  cross_depends: [{name: db, role: controller}]
  parameters: {cmd: "`+timed("app", `if [ \"$CAIRN_NODE\" = n3 ]; then sleep 3; fi`)+`"}
- id: lb
  type: shell
  roles: [controller]
  cross_depends: [{name: app, role: compute, policy: any}]
  parameters: {cmd: "`+timed("lb", "true")+`"}
`)
	e := h.run(contract.GraphRequest{})
	mustStatus(t, e, model.ExecCompleted)
	db := h.interval("n1", h.root("n1"), "db")
	app2, app3 := h.interval("n2", h.root("n2"), "app"), h.interval("n3", h.root("n3"), "app")
	for _, app := range []interval{app2, app3} {
		if app.start < db.end {
			t.Errorf("app on %s started before db on n1 ended", app.node)
		}
	}
	lb := h.interval("n1", h.root("n1"), "lb")
	if lb.start < app2.end {
		t.Error("lb started before any app finished")
	}
	if lb.start > app3.end {
		t.Error("lb waited for every app; policy any needs one")
	}
}

func TestStrategyCapsCopiesAcrossNodes(t *testing.T) {
	nodes := append(localNodes(), model.Node{ID: "n4", Name: "n4", Roles: []string{"compute"}})
	h := newHarness(t, harnessOptions{}, nodes...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: roll
  type: shell
  roles: ["*"]
  strategy: {type: one_by_one}
  parameters: {cmd: "`+timed("roll", "sleep 0.3")+`"}
- id: wave
  type: shell
  roles: ["*"]
  requires: [roll]
  strategy: {type: parallel, amount: 2}
  parameters: {cmd: "`+timed("wave", "sleep 0.3")+`"}
`)
	e := h.run(contract.GraphRequest{})
	mustStatus(t, e, model.ExecCompleted)
	tests := []struct {
		task string
		cap  int
	}{{"roll", 1}, {"wave", 2}}
	for _, tt := range tests {
		var ivs []interval
		for _, n := range nodes {
			ivs = append(ivs, h.interval(n.ID, h.root(n.ID), tt.task))
		}
		if got := maxOverlap(ivs); got > tt.cap {
			t.Errorf("%s: %d copies ran at once, strategy allows %d (%+v)", tt.task, got, tt.cap, ivs)
		}
	}
}

// A group's strategy bounds its members across the group's nodes, as
// Fuel deploys a one_by_one group one node at a time: two members of a
// one_by_one compute group never run at once, whichever member and node,
// while a member with a strategy of its own keeps it.
func TestGroupStrategyCapsItsMembers(t *testing.T) {
	nodes := append(localNodes(), model.Node{ID: "n4", Name: "n4", Roles: []string{"compute"}})
	h := newHarness(t, harnessOptions{}, nodes...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: compute
  type: group
  role: [compute]
  parameters: {strategy: {type: one_by_one}}
- id: work
  type: shell
  groups: [compute]
  parameters: {cmd: "`+timed("work", "sleep 0.4")+`"}
- id: more
  type: shell
  groups: [compute]
  parameters: {cmd: "`+timed("more", "sleep 0.4")+`"}
- id: own
  type: shell
  groups: [compute]
  strategy: {type: parallel}
  parameters: {cmd: "`+timed("own", "sleep 0.4")+`"}
`)
	e := h.run(contract.GraphRequest{})
	mustStatus(t, e, model.ExecCompleted)
	var members, own []interval
	for _, n := range nodes[1:] {
		members = append(members, h.interval(n.ID, h.root(n.ID), "work"), h.interval(n.ID, h.root(n.ID), "more"))
		own = append(own, h.interval(n.ID, h.root(n.ID), "own"))
	}
	assert.Equal(t, 1, maxOverlap(members), "members of a one_by_one group ran at once: %+v", members)
	assert.Greater(t, maxOverlap(own), 1, "a member's own parallel strategy is kept: %+v", own)
}

func TestFailOnError(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "tolerant", `
- id: flaky
  type: shell
  roles: [compute]
  fail_on_error: false
  parameters: {cmd: "test \"$CAIRN_NODE\" != n2"}
- id: after-flaky
  type: shell
  roles: [compute]
  requires: [flaky]
  parameters: {cmd: "echo ok > after-flaky.txt"}
`)
	h.putGraph(model.LayerRelease, "rel", "strict", `
- id: strict
  type: shell
  roles: [compute]
  parameters: {cmd: "test \"$CAIRN_NODE\" != n2"}
- id: after-strict
  type: shell
  roles: [compute]
  requires: [strict]
  parameters: {cmd: "echo ok > after-strict.txt"}
`)
	e := h.run(contract.GraphRequest{Types: []string{"tolerant"}})
	mustStatus(t, e, model.ExecCompleted)
	for _, n := range []string{"n2", "n3"} {
		if !exists(filepath.Join(h.root(n), "after-flaky.txt")) {
			t.Errorf("%s: after-flaky did not run; a failure with fail_on_error false is skipped", n)
		}
	}
	if e.Report.Skipped != 1 || e.Report.Failed != 0 {
		t.Fatalf("report %+v, want flaky@n2 skipped, nothing failed", e.Report)
	}

	e = h.run(contract.GraphRequest{Types: []string{"strict"}})
	mustStatus(t, e, model.ExecFailed)
	if s := stepStatus(e, "strict@n2"); s != model.StatusFailed {
		t.Errorf("strict@n2 is %s, want failed", s)
	}
	if s := stepStatus(e, "after-strict@n2"); s != model.StatusDepFailed {
		t.Errorf("after-strict@n2 is %s, want dep_failed", s)
	}
	if exists(filepath.Join(h.root("n2"), "after-strict.txt")) {
		t.Error("after-strict ran on n2 after strict failed there")
	}
}

func TestPauseFixRetry(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: needs-fix
  type: shell
  roles: [compute]
  parameters: {cmd: "test -f fixed && echo done > needs-fix.txt"}
- id: after
  type: shell
  roles: [compute]
  requires: [needs-fix]
  parameters: {cmd: "echo after > after.txt"}
`)
	writeFile(t, filepath.Join(h.root("n3"), "fixed"), "")
	e := h.start(contract.GraphRequest{OnFailure: model.OnFailurePause})
	w := h.waitFor(e.ID, "a step waiting for a decision", func(e *starter.Execution) bool { return e.Status == model.ExecWaiting })
	if w.Progress == nil || len(w.Progress.Waiting) != 1 || w.Progress.Waiting[0] != "needs-fix@n2" {
		t.Fatalf("waiting = %+v, want needs-fix@n2", w.Progress)
	}
	if d := h.currentDetails(w); !strings.Contains(d, "waiting for decision on needs-fix@n2") {
		t.Fatalf("current details %q do not show the wait", d)
	}
	// The operator fixes the host, then retries the step.
	writeFile(t, filepath.Join(h.root("n2"), "fixed"), "")
	h.decide(e.ID, model.DecisionRetry)
	done := h.await(e.ID)
	mustStatus(t, done, model.ExecCompleted)
	for _, n := range []string{"n2", "n3"} {
		if readFile(t, filepath.Join(h.root(n), "after.txt")) != "after\n" {
			t.Errorf("%s: after did not run", n)
		}
	}
}

func TestPauseRollback(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: config
  type: upload_file
  roles: [compute]
  parameters: {path: app.conf, data: v2}
- id: broken
  type: shell
  roles: [compute]
  requires: [config]
  parameters: {cmd: "exit 3"}
`)
	writeFile(t, filepath.Join(h.root("n2"), "app.conf"), "v1")
	e := h.start(contract.GraphRequest{OnFailure: model.OnFailurePause})
	h.waitFor(e.ID, "a step waiting for a decision", func(e *starter.Execution) bool { return e.Status == model.ExecWaiting })
	h.decide(e.ID, model.DecisionRollback)
	done := h.await(e.ID)
	mustStatus(t, done, model.ExecRolledBack)
	if got := readFile(t, filepath.Join(h.root("n2"), "app.conf")); got != "v1" {
		t.Errorf("n2: app.conf = %q after rollback, want v1 restored", got)
	}
	if exists(filepath.Join(h.root("n3"), "app.conf")) {
		t.Error("n3: app.conf, created by the execution, is still there after rollback")
	}
}

func TestSecondExecutionOnClusterRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: slow
  type: shell
  roles: [controller]
  parameters: {cmd: "sleep 2"}
`)
	first := h.start(contract.GraphRequest{})
	_, err := h.starter.StartGraph(context.Background(), h.pin(contract.GraphRequest{}))
	var conflict *starter.ConflictError
	if !errors.As(err, &conflict) || conflict.Running != first.ID || !strings.Contains(conflict.Error(), "cluster "+h.cluster) {
		t.Fatalf("second start: %v, want a conflict naming %s", err, first.ID)
	}
	// A dry run takes no lock.
	plan := h.run(contract.GraphRequest{DryRun: true})
	mustStatus(t, plan, model.ExecCompleted)
	mustStatus(t, h.await(first.ID), model.ExecCompleted)
	mustStatus(t, h.run(contract.GraphRequest{}), model.ExecCompleted)
}

func TestRetryFailedExecution(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: step1
  type: shell
  roles: [compute]
  parameters: {cmd: "echo x >> step1.log"}
- id: step2
  type: shell
  roles: [compute]
  requires: [step1]
  parameters: {cmd: "test -f fixed && echo x >> step2.log"}
- id: step3
  type: shell
  roles: [compute]
  requires: [step2]
  parameters: {cmd: "echo x >> step3.log"}
`)
	writeFile(t, filepath.Join(h.root("n3"), "fixed"), "")
	first := h.run(contract.GraphRequest{})
	mustStatus(t, first, model.ExecFailed)

	writeFile(t, filepath.Join(h.root("n2"), "fixed"), "")
	e, err := h.starter.RetryGraph(context.Background(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	retry := h.await(e.ID)
	mustStatus(t, retry, model.ExecCompleted)
	if retry.RetryOf != first.ID {
		t.Fatalf("retry links to %q, want %s", retry.RetryOf, first.ID)
	}
	desc, err := h.dev.Client.DescribeWorkflowExecution(context.Background(), retry.WorkflowID, retry.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if memo := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[starter.MemoRetryOf]; memo == nil || !strings.Contains(string(memo.GetData()), first.ID) {
		t.Fatalf("memo %v does not link to %s", memo, first.ID)
	}
	for _, n := range []string{"n2", "n3"} {
		for _, log := range []string{"step1.log", "step2.log", "step3.log"} {
			if got := readFile(t, filepath.Join(h.root(n), log)); got != "x\n" {
				t.Errorf("%s: %s = %q, want exactly one run (done steps come back as noops)", n, log, got)
			}
		}
	}
	if _, err := h.starter.RetryGraph(context.Background(), retry.ID); err == nil {
		t.Fatal("a completed execution was retried")
	}
}

func TestNodeHistoryConditions(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: config
  type: shell
  roles: [compute]
  parameters: {cmd: "echo x >> config.log"}
- id: restart
  type: shell
  roles: [compute]
  requires: [config]
  condition: 'changed "config"'
  parameters: {cmd: "echo x >> restart.log"}
- id: once
  type: shell
  roles: [compute]
  condition: 'eq lastRun ""'
  parameters: {cmd: "echo x >> once.log"}
`)
	lines := func(node, file string) int {
		return strings.Count(readFile(t, filepath.Join(h.root(node), file)), "\n")
	}
	steps := []struct {
		name    string
		change  string // new config command, set on the cluster layer
		force   bool
		restart int // restart.log lines on each node afterwards
		once    int
	}{
		{"first run: nothing recorded yet", "", false, 1, 1},
		{"same parameters: restart skipped", "", false, 1, 1},
		{"force ignores history", "", true, 2, 2},
		{"changed parameters", "echo y >> config.log", false, 3, 2},
		{"recorded again", "", false, 3, 2},
	}
	for i, st := range steps {
		if st.change != "" {
			h.putGraph(model.LayerCluster, "", "default", fmt.Sprintf("- id: config\n  parameters: {cmd: %q}\n", st.change))
		}
		e := h.run(contract.GraphRequest{Force: st.force})
		mustStatus(t, e, model.ExecCompleted)
		for _, n := range []string{"n2", "n3"} {
			if got := lines(n, "config.log"); got != i+1 {
				t.Fatalf("%s: %s: config ran %d times, want %d", st.name, n, got, i+1)
			}
			if got := lines(n, "restart.log"); got != st.restart {
				t.Errorf("%s: %s: restart ran %d times in all, want %d", st.name, n, got, st.restart)
			}
			if got := lines(n, "once.log"); got != st.once {
				t.Errorf("%s: %s: once ran %d times in all, want %d", st.name, n, got, st.once)
			}
		}
	}
	run, err := h.st.LastTaskRun(context.Background(), h.cluster, "n2", "restart")
	if err != nil || run.Digest == "" {
		t.Fatalf("restart's history on n2: %+v, %v", run, err)
	}
}

func TestDryRunAndNoopChangeNothing(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: motd
  type: upload_file
  roles: [compute]
  parameters: {path: motd, data: hello}
- id: touch
  type: shell
  roles: [compute]
  requires: [motd]
  parameters: {cmd: "touch touched"}
`)
	tests := []struct {
		name string
		run  contract.GraphRequest
		want model.Summary
	}{
		{"dry run: the plan only", contract.GraphRequest{DryRun: true}, model.Summary{Run: 4}},
		{"noop: read and diff on the nodes", contract.GraphRequest{Noop: true}, model.Summary{Create: 2, Run: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := h.start(tt.run)
			h.await(e.ID)
			done, err := h.starter.DescribeGraph(context.Background(), e.ID)
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, done, model.ExecCompleted)
			if done.Plan == nil || done.Plan.Summary != tt.want || len(done.Plan.Steps) != 4 {
				t.Fatalf("plan = %+v, want summary %+v over 4 steps", done.Plan, tt.want)
			}
			for _, n := range []string{"n2", "n3"} {
				if exists(filepath.Join(h.root(n), "motd")) || exists(filepath.Join(h.root(n), "touched")) {
					t.Fatalf("%s: a %s changed the node", n, tt.name)
				}
			}
		})
	}
	// Neither recorded history: a real run still finds nothing done.
	if _, err := h.st.LastTaskRun(context.Background(), h.cluster, "n2", "motd"); err == nil {
		t.Fatal("a dry run or noop run recorded node history")
	}
}

// TestFailedTaskIsNamedOnce: a shell task that fails names its step once,
// as the key of its failure, and nothing rolls back for it.
func TestFailedTaskIsNamedOnce(t *testing.T) {
	h := newHarness(t, harnessOptions{}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: broken
  type: shell
  roles: [compute]
  parameters: {cmd: "echo broken >&2; exit 3"}
`)
	e := h.run(contract.GraphRequest{OnFailure: model.OnFailureRollback})
	require.NotNil(t, e.Report, "status %s error %q", e.Status, e.Error)
	require.NotEmpty(t, e.Report.Failures)
	for _, f := range e.Report.Failures {
		t.Logf("failure %s: %q", f.Step, f.Error)
		assert.Contains(t, f.Step, "broken")
		assert.NotContains(t, f.Error, f.Step, "failure message %q repeats its step", f.Error)
		assert.Contains(t, f.Error, "exited 3")
	}
	assert.False(t, e.Report.RolledBack, "a task that changed nothing was rolled back")
}
