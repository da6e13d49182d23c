package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

func TestExecutorHonoursDependencies(t *testing.T) {
	// a → b, a → c, (b, c) → d, d → e; f independent.
	units := []contract.Unit{
		unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 0),
		unit(3, "exec/d", 1, 2), unit(4, "exec/e", 3), unit(5, "exec/f"),
	}
	f := newFake(units...)
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		for _, d := range u.Deps {
			dep := units[d].Step
			if f.startedAt[u.Step] < f.finishedAt[dep] {
				t.Errorf("%s started (t=%d) before its dependency %s finished (t=%d)", u.Step, f.startedAt[u.Step], dep, f.finishedAt[dep])
			}
		}
	}
	var res ApplyResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Report.Created != 6 || !res.Changed {
		t.Fatalf("report = %+v", res.Report)
	}
	if len(f.records) != 1 || !f.records[0].Changed || f.records[0].ExecutionID != "stack-s1" {
		t.Fatalf("stack record writes = %+v", f.records)
	}
}

func TestExecutorCapsParallelism(t *testing.T) {
	tests := []struct {
		name        string
		parallelism int
		units       int
		want        int
	}{
		{"cap 1 runs one at a time", 1, 6, 1},
		{"cap 4", 4, 20, 4},
		{"default cap", 0, 25, contract.DefaultParallelism},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var units []contract.Unit
			for i := range tt.units {
				units = append(units, unit(i, fmt.Sprintf("exec/u%d", i)))
			}
			f := newFake(units...)
			for _, u := range units {
				f.hold[u.Step] = 20 * time.Millisecond
			}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput("", tt.parallelism))
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if f.maxInflight != tt.want {
				t.Fatalf("max in flight = %d, want %d", f.maxInflight, tt.want)
			}
			if len(f.order) != tt.units {
				t.Fatalf("ran %d units, want %d", len(f.order), tt.units)
			}
		})
	}
}

func TestExecutorStrategyCapsCopiesOfATask(t *testing.T) {
	var units []contract.Unit
	for i := range 8 {
		u := unit(i, fmt.Sprintf("restart@n%d", i))
		u.Task, u.Strategy, u.Node = "restart", 2, fmt.Sprintf("n%d", i)
		units = append(units, u)
	}
	for i := range 4 { // another task, uncapped, runs alongside
		u := unit(8+i, fmt.Sprintf("ping@n%d", i))
		u.Task = "ping"
		units = append(units, u)
	}
	f := newFake(units...)
	for _, u := range units {
		f.hold[u.Step] = 20 * time.Millisecond
	}
	env := newEnv(t, f)
	in := applyInput("", 10)
	in.ClusterID = "c1"
	env.ExecuteWorkflow(ApplyWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if f.maxPerTask["restart"] != 2 {
		t.Fatalf("restart copies at once = %d, want 2", f.maxPerTask["restart"])
	}
	if f.maxInflight <= 2 {
		t.Fatalf("max in flight = %d: the uncapped task should run beside the capped one", f.maxInflight)
	}
	if q := f.queues["restart@n3"]; q != NodeTaskQueue("c1", "n3") {
		t.Fatalf("restart@n3 ran on queue %q, want %q", q, NodeTaskQueue("c1", "n3"))
	}
	if q := f.queues["ping@n0"]; q == "" || strings.HasPrefix(q, "cairn-node-") {
		t.Fatalf("control-plane step ran on queue %q", q)
	}
}

func TestExecutorAnyOf(t *testing.T) {
	tests := []struct {
		name     string
		failing  []string
		wantRuns bool
	}{
		{"one member suffices", []string{"exec/a"}, true},
		{"all members failed", []string{"exec/a", "exec/b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := unit(2, "exec/c")
			c.AnyOf = [][]int{{0, 1}}
			f := newFake(unit(0, "exec/a"), unit(1, "exec/b"), c)
			for _, id := range tt.failing {
				f.failures[id] = -1
			}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureContinue, 10))
			ran := f.runs["exec/c"] > 0
			if ran != tt.wantRuns {
				t.Fatalf("exec/c ran = %v, want %v", ran, tt.wantRuns)
			}
			r := reportOf(t, env.GetWorkflowError())
			if r.Failed != len(tt.failing) {
				t.Fatalf("failed = %d, want %d", r.Failed, len(tt.failing))
			}
		})
	}
}

func TestExecutorOnFailureModes(t *testing.T) {
	// a → b → c (c fails); x → y independent and slower; z depends on c.
	build := func() *fakeActivities {
		f := newFake(
			unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 1),
			unit(3, "exec/x"), unit(4, "exec/y", 3), unit(5, "exec/z", 2),
		)
		f.failures["exec/c"] = -1
		f.hold["exec/x"] = 300 * time.Millisecond
		f.hold["exec/y"] = 300 * time.Millisecond
		return f
	}
	tests := []struct {
		mode            model.OnFailure
		wantErrType     string
		wantCompensated []string
		wantRan         []string
		wantNotRan      []string
		wantRecord      bool
	}{
		// The failed step is compensated too: it may have half-applied.
		{model.OnFailureRollback, ErrRolledBack, []string{"exec/c", "exec/b", "exec/a", "exec/x"}, nil, []string{"exec/z", "exec/y"}, false},
		{model.OnFailureStop, ErrFailed, nil, []string{"exec/x"}, []string{"exec/z", "exec/y"}, true},
		{model.OnFailureContinue, ErrFailed, nil, []string{"exec/x", "exec/y"}, []string{"exec/z"}, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			f := build()
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(tt.mode, 2))
			err := env.GetWorkflowError()
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != tt.wantErrType {
				t.Fatalf("error = %v, want type %s", err, tt.wantErrType)
			}
			if !strings.Contains(app.Message(), "boom in exec/c") {
				t.Fatalf("error %q does not name the cause", app.Message())
			}
			if !sameSet(f.compensated, tt.wantCompensated) {
				t.Fatalf("compensated %v, want %v", f.compensated, tt.wantCompensated)
			}
			// A dependent is undone before what it depends on.
			for _, pair := range [][2]string{{"exec/c", "exec/b"}, {"exec/b", "exec/a"}} {
				if i, j := slices.Index(f.compensated, pair[0]), slices.Index(f.compensated, pair[1]); i >= 0 && j >= 0 && i > j {
					t.Fatalf("%s undone after %s: %v", pair[0], pair[1], f.compensated)
				}
			}
			for _, id := range tt.wantRan {
				if f.runs[id] == 0 {
					t.Errorf("%s did not run", id)
				}
			}
			for _, id := range tt.wantNotRan {
				if f.runs[id] != 0 {
					t.Errorf("%s ran", id)
				}
			}
			if (len(f.records) == 1) != tt.wantRecord {
				t.Fatalf("record writes = %d, want record %v", len(f.records), tt.wantRecord)
			}
			r := reportOf(t, err)
			if r.Failed != 1 || len(r.Failures) != 1 || r.Failures[0].Step != "exec/c" {
				t.Fatalf("report = %+v", r)
			}
			if r.RolledBack != (tt.mode == model.OnFailureRollback) {
				t.Fatalf("rolledBack = %v", r.RolledBack)
			}
		})
	}
}

func TestFailOnErrorFalseSkips(t *testing.T) {
	a := unit(0, "exec/a")
	a.ContinueOnError = true
	f := newFake(a, unit(1, "exec/b", 0))
	f.failures["exec/a"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res ApplyResult
	_ = env.GetWorkflowResult(&res)
	if res.Report.Skipped != 1 || res.Report.Created != 1 || f.runs["exec/b"] != 1 {
		t.Fatalf("report %+v, b runs %d", res.Report, f.runs["exec/b"])
	}
}

func TestConfigErrorIsNotRetried(t *testing.T) {
	f := newFake(unit(0, "file/bad"))
	f.configErrs["file/bad"] = true
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureStop, 10))
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "spec.mode: invalid") {
		t.Fatalf("error = %v", err)
	}
	if n := len(f.order); n != 1 {
		t.Fatalf("config error ran %d times, want 1", n)
	}
}

func TestBatchReportsEachStep(t *testing.T) {
	b := contract.Unit{Index: 0, Step: "file/f0", Count: 3, Batch: true, Kind: "file", Summary: "apply 3 files"}
	f := newFake(b, unit(1, "exec/after", 0))
	f.batches[0] = []string{"file/f0", "file/f1", "file/f2"}
	f.failures["file/f1"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureContinue, 10))
	r := reportOf(t, env.GetWorkflowError())
	if r.Created != 2 || r.Failed != 1 || r.Skipped != 1 {
		t.Fatalf("report = %+v", r)
	}
	if len(r.Failures) != 1 || r.Failures[0].Step != "file/f1" {
		t.Fatalf("failures = %+v", r.Failures)
	}
}

type decisionCase struct {
	action          model.Decision
	wantErr         bool
	wantRuns        int // runs of the failing step
	wantAfterRan    bool
	wantCompensated []string
}
