package api

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// Executions starts and queries executions (Temporal workflows); the
// starter implements it. The API needs nothing more of Temporal.
type Executions interface {
	StartApply(ctx context.Context, run starter.StackRun) (*starter.Execution, error)
	StartDryRun(ctx context.Context, run starter.StackRun) (*starter.Execution, error)
	StartDestroy(ctx context.Context, run starter.StackRun) (*starter.Execution, error)
	// StartGraph runs graph types on a cluster: a request the API checked
	// and pinned (its merged graphs and expanded steps as snapshots).
	StartGraph(ctx context.Context, run contract.GraphRequest) (*starter.Execution, error)
	// StartGraphApproval runs them once approved (a four-eyes policy).
	StartGraphApproval(ctx context.Context, run contract.GraphRequest, approval *contract.ApprovalSettings) (*starter.Execution, error)
	// Describe returns the execution with its steps and, once finished,
	// its report or plan.
	Describe(ctx context.Context, id string) (*starter.Execution, error)
	// Await blocks until the execution closes (or ctx ends) and describes it.
	Await(ctx context.Context, id string) (*starter.Execution, error)
	List(ctx context.Context, f starter.Filter) ([]*starter.Execution, []byte, error)
	Cancel(ctx context.Context, id string) error
	Retry(ctx context.Context, id string) (*starter.Execution, error)
	RetryGraph(ctx context.Context, id string) (*starter.Execution, error)
	Decide(ctx context.Context, id string, req model.DecisionRequest) (*model.DecisionResult, error)
	// Graph lists the execution's steps with the steps each waits for.
	Graph(ctx context.Context, id string) ([]model.StepDeps, error)
	// Steps answers a page of the execution's step states from offset, at
	// most limit (0: as many as fit in one answer).
	Steps(ctx context.Context, id string, offset, limit int) (*model.ProgressPage, error)
	// StepsSince answers the states of the steps that changed after an
	// opaque cursor ("": all), at most limit, with the next cursor
	// (starter.ErrBadCursor for one it did not give).
	StepsSince(ctx context.Context, id, cursor string, limit int) (*model.ProgressPage, error)
	// DescribeSince describes the execution with, as its steps, those
	// that changed after cursor (one bounded answer; Progress.Cursor and
	// More say where to go on).
	DescribeSince(ctx context.Context, id, cursor string) (*starter.Execution, error)
	// WaitClosed blocks until the execution closes or ctx ends.
	WaitClosed(ctx context.Context, id string) error
	// Approve approves or rejects a plan awaiting approval.
	Approve(ctx context.Context, id string, req model.ApprovalRequest) (*model.Approval, error)
}

// Lister lists the existing objects of a kind on the control plane, sorted
// by name, for export; the composition root adapts the providers'
// registry. A kind that cannot be listed is an error naming it.
type Lister interface {
	List(ctx context.Context, kind string, q model.ListQuery) ([]model.Listed, error)
}

// executionError maps an Executions failure to an answer.
func (s *server) executionError(err error, id string) error {
	var conflictErr *starter.ConflictError
	switch {
	case errors.As(err, &conflictErr):
		return &Error{Status: http.StatusConflict, Message: conflictErr.Error(), Cause: err,
			Extra: map[string]any{"running": conflictErr.Running}}
	case errors.Is(err, starter.ErrNoGraph):
		return &Error{Status: http.StatusNotFound, Message: err.Error(), Cause: err}
	case errors.Is(err, starter.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("execution %q not found", id), Cause: err}
	case errors.Is(err, starter.ErrNotWaiting), errors.Is(err, starter.ErrFinished):
		return &Error{Status: http.StatusConflict, Message: err.Error(), Cause: err}
	case errors.Is(err, starter.ErrInvalidGraphRun):
		return &Error{Status: http.StatusUnprocessableEntity, Message: err.Error(), Cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Status: http.StatusServiceUnavailable, Message: "request canceled", Cause: err}
	default:
		return &Error{Status: http.StatusInternalServerError, Message: "internal error", Cause: err}
	}
}

// fromStarter converts the starter's execution to the API's shape: the
// progress counts without a second copy of the steps.
func fromStarter(e *starter.Execution) *model.Execution {
	if e == nil {
		return nil
	}
	out := &model.Execution{
		ID: e.ID, Kind: e.Kind, Status: e.Status, StackID: e.StackID, ClusterID: e.ClusterID, RetryOf: e.RetryOf,
		WorkflowID: e.WorkflowID, RunID: e.RunID, Namespace: e.Namespace, StartedAt: e.StartedAt, ClosedAt: e.ClosedAt,
		Steps: e.Steps, Plan: e.Plan, Report: e.Report, Error: e.Error, UIURL: e.UIURL,
		Awaiting: e.Awaiting, Approval: e.Approval,
	}
	if p := e.Progress; p != nil {
		out.Progress = &model.Progress{Total: p.Total, Done: p.Done, Running: p.Running, Waiting: p.Waiting, Entries: p.Entries}
	}
	return out
}

// encodePageToken and decodePageToken carry Temporal's opaque page token
// in a URL-safe string.
func encodePageToken(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	return base64.RawURLEncoding.DecodeString(s)
}
