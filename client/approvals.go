package client

import (
	"context"
	"net/http"

	"github.com/cairn-io/cairn/model"
)

// ApprovalTarget names what an approval policy is set on: "stacks" or
// "clusters" (the collection of the route).
type ApprovalTarget string

// Approval targets.
const (
	StackApprovals   ApprovalTarget = "stacks"
	ClusterApprovals ApprovalTarget = "clusters"
)

func approvalsPath(t ApprovalTarget, id string) string {
	return "/v1/" + string(t) + "/" + esc(id) + "/approvals"
}

// SetApprovals sets the four-eyes policy of a stack or cluster and
// returns it as stored (required 0 means the default, 1).
func (c *Client) SetApprovals(ctx context.Context, t ApprovalTarget, id string, p model.ApprovalPolicy) (*model.ApprovalPolicy, error) {
	var out model.ApprovalPolicy
	if _, err := c.do(ctx, http.MethodPut, approvalsPath(t, id), nil, p, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Approvals returns the four-eyes policy of a stack or cluster (a 404
// APIError when it has none).
func (c *Client) Approvals(ctx context.Context, t ApprovalTarget, id string) (*model.ApprovalPolicy, error) {
	var out model.ApprovalPolicy
	if _, err := c.do(ctx, http.MethodGet, approvalsPath(t, id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ClearApprovals removes the four-eyes policy of a stack or cluster.
func (c *Client) ClearApprovals(ctx context.Context, t ApprovalTarget, id string) error {
	_, err := c.do(ctx, http.MethodDelete, approvalsPath(t, id), nil, nil, nil)
	return err
}
