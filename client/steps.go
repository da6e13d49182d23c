package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-io/cairn/model"
)

// Steps returns a page of an execution's step states from offset, at most
// limit (0: as many as the server puts in one answer); the next page
// starts at Offset+len(Steps) while that is below Entries.
func (c *Client) Steps(ctx context.Context, id string, offset, limit int) (*model.ExecutionSteps, error) {
	q := url.Values{"offset": {strconv.Itoa(offset)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out model.ExecutionSteps
	_, err := c.do(ctx, http.MethodGet, "/v1/executions/"+esc(id)+"/steps", q, nil, &out)
	return orNil(&out, err)
}

// StepsSince returns the states of the steps of an execution that changed
// after cursor ("" for every step), at most limit (0: as many as fit in
// one answer), and the cursor to ask from next (answer.Cursor); while
// answer.More is set, ask again at once. Cursors are opaque: pass back
// what the server gave. Following an execution this way costs the server
// what changed, not every step, on each question.
func (c *Client) StepsSince(ctx context.Context, id, cursor string, limit int) (*model.ExecutionSteps, error) {
	q := url.Values{"since": {cursor}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out model.ExecutionSteps
	_, err := c.do(ctx, http.MethodGet, "/v1/executions/"+esc(id)+"/steps", q, nil, &out)
	return orNil(&out, err)
}
