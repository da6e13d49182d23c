package client

import (
	"context"
	"net/http"

	"github.com/cairn-io/cairn/model"
)

// SetDrift creates or replaces a stack's drift schedule.
func (c *Client) SetDrift(ctx context.Context, stackID string, set model.DriftSettings) (*model.Drift, error) {
	var out model.Drift
	if _, err := c.do(ctx, http.MethodPut, "/v1/stacks/"+esc(stackID)+"/drift", nil, set, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PatchDrift changes some settings of a stack's drift schedule (pausing
// it, for one).
func (c *Client) PatchDrift(ctx context.Context, stackID string, p model.DriftPatch) (*model.Drift, error) {
	var out model.Drift
	if _, err := c.do(ctx, http.MethodPatch, "/v1/stacks/"+esc(stackID)+"/drift", nil, p, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetDrift returns a stack's drift schedule with its last check (a 404
// APIError when it has none).
func (c *Client) GetDrift(ctx context.Context, stackID string) (*model.Drift, error) {
	var out model.Drift
	if _, err := c.do(ctx, http.MethodGet, "/v1/stacks/"+esc(stackID)+"/drift", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDrift deletes a stack's drift schedule.
func (c *Client) DeleteDrift(ctx context.Context, stackID string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/stacks/"+esc(stackID)+"/drift", nil, nil, nil)
	return err
}

// PutHooks replaces a stack's webhooks and returns them as stored
// (secrets by fingerprint only).
func (c *Client) PutHooks(ctx context.Context, stackID string, hooks []model.Hook) ([]model.HookView, error) {
	var out model.HookViews
	if _, err := c.do(ctx, http.MethodPut, "/v1/stacks/"+esc(stackID)+"/hooks", nil, model.Hooks{Hooks: hooks}, &out); err != nil {
		return nil, err
	}
	return out.Hooks, nil
}

// Hooks lists a stack's webhooks (secrets by fingerprint only).
func (c *Client) Hooks(ctx context.Context, stackID string) ([]model.HookView, error) {
	var out model.HookViews
	if _, err := c.do(ctx, http.MethodGet, "/v1/stacks/"+esc(stackID)+"/hooks", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Hooks, nil
}

// DeleteHooks removes every webhook of a stack.
func (c *Client) DeleteHooks(ctx context.Context, stackID string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/stacks/"+esc(stackID)+"/hooks", nil, nil, nil)
	return err
}
