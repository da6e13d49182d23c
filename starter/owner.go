package starter

import (
	"context"
	"fmt"

	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
)

// Owner answers what an execution acts on — its kind, stack and cluster —
// from one DescribeWorkflowExecution, without querying the workflow: what
// authorizing a request on the execution needs. ErrNotFound for an id that
// is no Cairn execution.
func (s *Starter) Owner(ctx context.Context, id string) (model.ExecutionKind, string, string, error) {
	wfID, runID := ParseExecutionID(id)
	desc, err := s.c.DescribeWorkflowExecution(ctx, wfID, runID)
	if err != nil {
		return "", "", "", notFoundOr(err, id)
	}
	info := desc.GetWorkflowExecutionInfo()
	kind, ok := workflowKinds[info.GetType().GetName()]
	if !ok {
		return "", "", "", fmt.Errorf("%w: %s is not a Cairn execution", ErrNotFound, id)
	}
	sa := info.GetSearchAttributes().GetIndexedFields()
	return kind, keyword(sa[searchattr.Stack.GetName()]), keyword(sa[searchattr.Cluster.GetName()]), nil
}
