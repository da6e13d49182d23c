package agentapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/cairn-io/cairn/model"
)

// PathFacts (POST) takes the model.NodeFacts the agent reports of its
// host when it starts; 204, or 400 naming the field the server refused.
const PathFacts = "/v1/agent/facts"

// ReportFacts sends the node's facts to the server.
func (c *Client) ReportFacts(ctx context.Context, f *model.NodeFacts) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("node facts: %w", err)
	}
	if _, err := c.do(ctx, http.MethodPost, PathFacts, nil, raw); err != nil {
		return fmt.Errorf("report node facts: %w", err)
	}
	return nil
}
