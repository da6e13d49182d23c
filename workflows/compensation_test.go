package workflows

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestExecutorCompensatesInReverseDependencyOrder(t *testing.T) {
	// A chain whose completion order and dependency order agree, plus a
	// fan-in: d depends on b and c; e fails after d.
	f := newFake(
		unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 0),
		unit(3, "exec/d", 1, 2), unit(4, "exec/e", 3),
	)
	f.hold["exec/b"] = 30 * time.Millisecond
	f.failures["exec/e"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 1))
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("want failure")
	}
	// Compensation of e is attempted (it may have half-applied), then d,
	// then b and c (most recent first), then a.
	want := []string{"exec/e", "exec/d", "exec/c", "exec/b", "exec/a"}
	if !slices.Equal(f.compensated, want) {
		t.Fatalf("compensation order %v, want %v", f.compensated, want)
	}
}

func TestExecutorCompensatesOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name      string
		untouched bool
		want      []string
	}{
		{"a failed step that changed nothing gets no compensation", true, []string{"exec/d", "exec/c", "exec/b", "exec/a"}},
		{"a failed step that may have changed something is compensated first", false, []string{"exec/e", "exec/d", "exec/c", "exec/b", "exec/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(
				unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/c", 0),
				unit(3, "exec/d", 1, 2), unit(4, "exec/e", 3),
			)
			f.hold["exec/b"] = 30 * time.Millisecond
			f.failures["exec/e"] = -1
			f.untouched = map[string]bool{"exec/e": tt.untouched}
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 1))
			r := reportOf(t, env.GetWorkflowError())
			require.True(t, r.RolledBack)
			require.Equal(t, tt.want, f.compensated)
			require.Len(t, r.Failures, 1)
			assert.Equal(t, "exec/e", r.Failures[0].Step)
		})
	}
}

func TestExecutorCompensationFailuresAreNamed(t *testing.T) {
	f := newFake(unit(0, "stuck/a"), unit(1, "irreversible/b", 0), unit(2, "exec/c", 1))
	f.failures["exec/c"] = -1
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailureRollback, 10))
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatal(err)
	}
	for _, want := range []string{"boom in exec/c", "stuck/a: cannot restore stuck/a", "irreversible/b: irreversible"} {
		if !strings.Contains(app.Message(), want) {
			t.Errorf("error %q lacks %q", app.Message(), want)
		}
	}
	if r := reportOf(t, err); len(r.CompensationFailures) != 2 {
		t.Fatalf("compensation failures = %+v", r.CompensationFailures)
	}
}

func TestCancelRollsBackAnApply(t *testing.T) {
	f := newFake(unit(0, "exec/a"), unit(1, "exec/b", 0), unit(2, "exec/slow", 1), unit(3, "exec/after", 2))
	f.hold["exec/slow"] = 2 * time.Second
	env := newEnv(t, f)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	err := env.GetWorkflowError()
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("want cancelled, got %v", err)
	}
	if f.runs["exec/after"] != 0 {
		t.Fatal("a step started after cancellation")
	}
	// The interrupted step is compensated too (it may have half-applied).
	want := []string{"exec/slow", "exec/b", "exec/a"}
	if !slices.Equal(f.compensated, want) {
		t.Fatalf("compensated %v, want %v", f.compensated, want)
	}
	if len(f.records) != 0 {
		t.Fatal("a rolled-back apply wrote the stack record")
	}
}
