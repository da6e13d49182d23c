package workflows

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

func TestProgressQueryPaginates(t *testing.T) {
	var units []contract.Unit
	for i := range 7 {
		units = append(units, unit(i, fmt.Sprintf("exec/s%d", i)))
	}
	f := newFake(units...)
	env := newEnv(t, f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	v, err := env.QueryWorkflow(ProgressQuery, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	var p model.ProgressPage
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if p.Total != 7 || p.Done != 7 || p.Entries != 7 || len(p.Steps) != 3 || p.Steps[0].ID != "exec/s2" {
		t.Fatalf("progress = %+v", p)
	}
	if p.Status != model.ExecCompleted || p.Steps[0].Status != model.StatusSucceeded || p.Steps[0].Action != model.ActionCreate {
		t.Fatalf("step progress = %+v (status %s)", p.Steps[0], p.Status)
	}
}

// TestProgressPageStaysSmallOnAFleet: a first page of a large execution's
// progress stays below the SDK's payload warning (512 KB) and says how many
// entries there are, so the caller pages on.
func TestProgressPageStaysSmallOnAFleet(t *testing.T) {
	const steps = 4000
	var units []contract.Unit
	for i := range steps {
		units = append(units, unit(i, fmt.Sprintf("exec/node-%04d-of-a-large-fleet/task-%04d", i/20, i%20)))
	}
	env := newEnv(t, newFake(units...))
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	v, err := env.QueryWorkflow(ProgressQuery, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var p model.ProgressPage
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) >= 512<<10 {
		t.Fatalf("a progress page of %d steps is %d bytes", len(p.Steps), len(raw))
	}
	if p.Entries != steps || len(p.Steps) == 0 || len(p.Steps) >= steps {
		t.Fatalf("page: %d of %d entries", len(p.Steps), p.Entries)
	}
	t.Logf("first page: %d of %d entries, %d bytes", len(p.Steps), p.Entries, len(raw))
}
