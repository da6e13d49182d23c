package workflows

import (
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
