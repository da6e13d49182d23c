package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cairn-io/cairn/model"
)

// CreatePrincipal creates a user or service account.
func (c *Client) CreatePrincipal(ctx context.Context, in model.PrincipalInput) (*model.Principal, error) {
	var out model.Principal
	_, err := c.do(ctx, http.MethodPost, "/v1/principals", nil, in, &out)
	return orNil(&out, err)
}

// ListPrincipals lists every principal.
func (c *Client) ListPrincipals(ctx context.Context) ([]model.Principal, error) {
	var out model.PrincipalList
	_, err := c.do(ctx, http.MethodGet, "/v1/principals", nil, nil, &out)
	return out.Principals, err
}

// GetPrincipal reads a principal by id or name.
func (c *Client) GetPrincipal(ctx context.Context, idOrName string) (*model.Principal, error) {
	var out model.Principal
	_, err := c.do(ctx, http.MethodGet, "/v1/principals/"+esc(idOrName), nil, nil, &out)
	return orNil(&out, err)
}

// DeletePrincipal deletes a principal (by id or name) and its tokens.
func (c *Client) DeletePrincipal(ctx context.Context, idOrName string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/principals/"+esc(idOrName), nil, nil, nil)
	return err
}

// CreateToken makes a token; the answer holds it, this once.
func (c *Client) CreateToken(ctx context.Context, in model.TokenInput) (*model.TokenCreated, error) {
	var out model.TokenCreated
	_, err := c.do(ctx, http.MethodPost, "/v1/tokens", nil, in, &out)
	return orNil(&out, err)
}

// ListTokens lists every token's record.
func (c *Client) ListTokens(ctx context.Context) ([]model.Token, error) {
	var out model.TokenList
	_, err := c.do(ctx, http.MethodGet, "/v1/tokens", nil, nil, &out)
	return out.Tokens, err
}

// RevokeToken deletes a token.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/tokens/"+esc(id), nil, nil, nil)
	return err
}

// Whoami answers who the client's token acts as.
func (c *Client) Whoami(ctx context.Context) (*model.Whoami, error) {
	var out model.Whoami
	_, err := c.do(ctx, http.MethodGet, "/v1/whoami", nil, nil, &out)
	return orNil(&out, err)
}

// Audit lists a page of the audit trail the filter selects.
func (c *Client) Audit(ctx context.Context, f model.AuditFilter) (*model.AuditList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"principal": f.Principal, "stack": f.Stack, "cluster": f.Cluster, "execution": f.Execution} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Before > 0 {
		q.Set("before", strconv.FormatInt(f.Before, 10))
	}
	var out model.AuditList
	_, err := c.do(ctx, http.MethodGet, "/v1/audit", q, nil, &out)
	return orNil(&out, err)
}

// SetLabels replaces the labels of a stack, cluster or release (kind
// "stacks", "clusters" or "releases"); none removes them.
func (c *Client) SetLabels(ctx context.Context, collection, id string, labels map[string]string) (map[string]string, error) {
	var out model.LabelsBody
	_, err := c.do(ctx, http.MethodPut, "/v1/"+esc(collection)+"/"+esc(id)+"/labels", nil, model.LabelsBody{Labels: labels}, &out)
	return out.Labels, err
}
