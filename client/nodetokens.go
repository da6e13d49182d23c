package client

import (
	"context"
	"net/http"

	"github.com/cairn-io/cairn/model"
)

// RotateNodeToken replaces the token of an agent node that has one: the
// old token is refused from the moment the new one is stored. A node
// without a token is 404 (IssueNodeToken enrols one).
func (c *Client) RotateNodeToken(ctx context.Context, clusterID, nodeID string) (*model.NodeToken, error) {
	var out model.NodeToken
	_, err := c.do(ctx, http.MethodPost, "/v1/clusters/"+esc(clusterID)+"/nodes/"+esc(nodeID)+"/token/rotate", nil, nil, &out)
	return orNil(&out, err)
}

// RevokeNodeToken deletes an agent node's token: its agent's next
// request is refused. 404 when the node had none.
func (c *Client) RevokeNodeToken(ctx context.Context, clusterID, nodeID string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/clusters/"+esc(clusterID)+"/nodes/"+esc(nodeID)+"/token", nil, nil, nil)
	return err
}
