package starter

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// DriftCheck is a drift check started outside the stack's schedule.
type DriftCheck struct {
	// WorkflowID is the check's id: the schedule's id and the time.
	WorkflowID string
	run        client.WorkflowRun
}

// Wait waits for the check to end and returns its result.
func (d *DriftCheck) Wait(ctx context.Context) (*workflows.DriftResult, error) {
	var res workflows.DriftResult
	if err := d.run.Get(ctx, &res); err != nil {
		return nil, fmt.Errorf("drift check %s: %w", d.WorkflowID, err)
	}
	return &res, nil
}

// StartDriftCheck starts a drift check of the stack now, limited to
// resources (planner.RecordKey keys; none: the whole stack), as its
// schedule would: under an id of the schedule's form (contract.
// DriftScheduleID, "-" and the time to the nanosecond, so two checks of
// one second differ), on the control plane's queue. The check reads
// repair from the store. One call to Temporal.
func (s *Starter) StartDriftCheck(ctx context.Context, stackID string, resources []string) (*DriftCheck, error) {
	id := contract.DriftScheduleID(stackID) + "-" + time.Now().UTC().Format(time.RFC3339Nano)
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.cfg.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.Kind.ValueSet(string(model.ExecDrift)), searchattr.Stack.ValueSet(stackID)),
		StaticSummary: fmt.Sprintf("drift check of %d watched resources of stack %s", len(resources), stackID),
	}, workflows.DriftCheckWorkflow, workflows.DriftInput{StackID: stackID, Resources: resources})
	if err != nil {
		return nil, fmt.Errorf("start drift check of stack %s: %w", stackID, err)
	}
	return &DriftCheck{WorkflowID: id, run: run}, nil
}

// StackBusy says whether an apply or destroy of the stack runs now (its
// lock id is open). One call to Temporal.
func (s *Starter) StackBusy(ctx context.Context, stackID string) (bool, error) {
	desc, err := s.c.DescribeWorkflowExecution(ctx, workflows.StackWorkflowID(stackID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("is stack %s busy: %w", stackID, err)
	}
	return desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}
