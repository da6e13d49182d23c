package workflows

import (
	"testing"

	"go.temporal.io/sdk/client"
)

func TestDryRunPlansWithoutChanging(t *testing.T) {
	f := newFake(unit(0, "exec/a"), unit(1, "exec/b", 0))
	f.failures["exec/a"] = -1 // a read error is reported, not fatal
	env := newEnv(t, f)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testDryRunID})
	env.ExecuteWorkflow(DryRunWorkflow, DryRunInput{Settings: Settings{ExecutionID: testDryRunID}, StackID: "s1", SnapshotHash: "h"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res DryRunResult
	_ = env.GetWorkflowResult(&res)
	if !f.noop || len(f.plans) != 1 || len(res.Failures) != 1 || res.ExecutionID != testDryRunID {
		t.Fatalf("dry-run result %+v, plans %+v", res, f.plans)
	}
	if len(f.records) != 0 || len(f.compensated) != 0 {
		t.Fatal("a dry-run recorded or compensated")
	}
}
