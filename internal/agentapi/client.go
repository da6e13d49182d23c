package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairn-io/cairn/store"
)

// Bounds of the client: the largest record it reads, and the body size it
// splits a batch of writes under (the server's body limit is 10 MB by
// default).
const (
	MaxRecordBytes  = 64 << 20
	MaxRequestBytes = 4 << 20
)

// IdleConnTimeout is how long the client keeps a connection to the server
// it is not using: long enough to carry an execution's units from one
// level to the next, short enough that an idle agent holds no connection
// (nor a goroutine of the server's) soon after its last step.
const IdleConnTimeout = 30 * time.Second

// ErrForbidden is returned (wrapped) when the server refuses the token or
// the record (401, 403).
var ErrForbidden = errors.New("refused by the server")

// Client reaches the agent API of the server at BaseURL with a node
// token. It serves the step activities' step data (activities.StepData):
// a record the server does not have is store.ErrNotFound.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the server at baseURL (http or https)
// presenting token; httpClient nil means one with a 2-minute timeout
// whose idle connections close after IdleConnTimeout, and that never
// delivers a request it gave up on (fenceTransport).
func NewClient(baseURL, token string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http(s)://host[:port]", baseURL)
	}
	if _, _, err := ParseToken(token); err != nil {
		return nil, err
	}
	if httpClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.IdleConnTimeout = IdleConnTimeout
		fenceTransport(tr)
		httpClient = &http.Client{Timeout: 2 * time.Minute, Transport: tr}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: httpClient}, nil
}

// Node asks which node the token belongs to.
func (c *Client) Node(ctx context.Context) (*NodeInfo, error) {
	body, err := c.do(ctx, http.MethodGet, PathNode, nil, nil)
	if err != nil {
		return nil, err
	}
	var info NodeInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("node info: %w", err)
	}
	return &info, nil
}

// GetStepData reads one record.
func (c *Client) GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error) {
	q := url.Values{"execution": {execID}, "kind": {kind}, "key": {stepID}}
	data, err := c.do(ctx, http.MethodGet, PathData, q, nil)
	if err != nil {
		return nil, fmt.Errorf("%s data of step %q of %s: %w", kind, stepID, execID, err)
	}
	return data, nil
}

// PutStepData writes one record.
func (c *Client) PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error {
	return c.PutStepDataBatch(ctx, execID, kind, map[string][]byte{stepID: data})
}

// PutStepDataBatch writes records of one kind, in requests of at most
// about MaxRequestBytes each.
func (c *Client) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	q := url.Values{"execution": {execID}, "kind": {kind}}
	part, size := map[string][]byte{}, 0
	flush := func() error {
		if len(part) == 0 {
			return nil
		}
		raw, err := json.Marshal(part)
		if err != nil {
			return err
		}
		if _, err := c.do(ctx, http.MethodPost, PathData, q, raw); err != nil {
			return fmt.Errorf("put %d %s data of %s: %w", len(part), kind, execID, err)
		}
		part, size = map[string][]byte{}, 0
		return nil
	}
	for id, v := range data {
		n := len(id) + len(v)*4/3 + 8
		if size+n > MaxRequestBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		part[id] = v
		size += n
	}
	return flush()
}

// do sends one request, again while the server cannot be reached or
// answers 502, 503 or 504 (it restarts, or a proxy before it does), for
// up to RetryFor: every request of the agent API is idempotent (a read,
// or a write of the same records), so a step that ran while the server
// was away records its outcome once it is back rather than failing and
// running again.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte) ([]byte, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	// Retries included, a request takes at most RetryFor.
	deadline := time.Now().Add(RetryFor)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	wait := retryFirstWait
	for {
		out, retry, err := c.once(ctx, method, u, body)
		if !retry || time.Now().Add(wait).After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMaxWait)
	}
}

// Retries of a request the server could not answer.
const (
	// RetryFor bounds how long a request is tried again: a restart of
	// the server takes seconds.
	RetryFor       = time.Minute
	retryFirstWait = 100 * time.Millisecond
	retryMaxWait   = 2 * time.Second
)

// once sends a request and says whether it is worth sending again.
func (c *Client) once(ctx context.Context, method, u string, body []byte) (_ []byte, retry bool, _ error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The server is not there (refused, reset, gone mid-answer),
		// unless the request's own context ended.
		return nil, ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, MaxRecordBytes+1))
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	if len(out) > MaxRecordBytes {
		return nil, false, fmt.Errorf("answer over %d bytes", MaxRecordBytes)
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return out, false, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, store.ErrNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, false, fmt.Errorf("%w (%d): %s", ErrForbidden, resp.StatusCode, message(out))
	case resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout:
		return nil, true, fmt.Errorf("server answered %d: %s", resp.StatusCode, message(out))
	}
	return nil, false, fmt.Errorf("server answered %d: %s", resp.StatusCode, message(out))
}

// message is the error message of an API error body, shortened.
func message(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}
