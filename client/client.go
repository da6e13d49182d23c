// Package client is a Go client of Cairn's HTTP API, with a typed method
// for every route. Errors the server answers in its error shape come back
// as *APIError, so callers can read the status, code and every positioned
// detail. The CLI goes through it like any other user.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Client talks to one Cairn server. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	token     string
	http      *http.Client
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, transport). The default
// has no overall timeout, since event streams and waits are long; pass a
// context deadline per call instead.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the server at baseURL ("http://127.0.0.1:8080");
// token, when not empty, is sent as a bearer token.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http(s)://host[:port]", baseURL)
	}
	c := &Client{base: u, token: token, http: http.DefaultClient, userAgent: "cairn-client"}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// APIError is an error answer of the server.
type APIError struct {
	Status  int
	Code    string
	Message string
	Details []model.ErrorDetail
	// Running names the execution that holds the stack or cluster (409).
	Running string
	// RequestID is the server's id of the request, for its logs.
	RequestID string
	// Body is the raw answer, for fields the error shape does not name (a
	// dry-run's summary next to its errors).
	Body []byte
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", e.Status, e.Code, e.Message)
	for _, d := range e.Details {
		b.WriteString("\n  ")
		b.WriteString(d.String())
	}
	return b.String()
}

// IsStatus reports whether err is an APIError with the given status.
func IsStatus(err error, status int) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == status
}

// Document is a package or graph to send.
type Document struct {
	Data []byte
	// Format is "yaml", "json" or "jsonnet" (self-contained: the server
	// refuses imports, so evaluate Jsonnet with imports locally and send
	// JSON).
	Format string
	// Upload, for an apply or dry-run, names a package already sent in
	// parts (Upload) to run instead of Data.
	Upload string
}

// ContentType is the media type of the document's format.
func (d Document) ContentType() string {
	switch strings.ToLower(d.Format) {
	case "json":
		return "application/json"
	case "jsonnet":
		return "application/jsonnet"
	default:
		return "application/yaml"
	}
}

// request is one call.
type request struct {
	method string
	path   string
	query  url.Values
	body   io.Reader
	ctype  string
	accept string
	// lastEventID goes as Last-Event-ID (an event stream resumed).
	lastEventID string
}

func (c *Client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + r.path
	u.RawQuery = r.query.Encode()
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), r.body)
	if err != nil {
		return nil, err
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if r.lastEventID != "" {
		req.Header.Set("Last-Event-ID", r.lastEventID)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("User-Agent", c.userAgent)
	return req, nil
}

// send performs the call; a non-2xx answer becomes an *APIError.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, decodeError(resp)
}

func decodeError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	e := &APIError{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID"), Body: body}
	var shape model.ErrorBody
	if err := json.Unmarshal(body, &shape); err == nil && shape.Error.Code != "" {
		e.Code, e.Message, e.Details, e.Running = shape.Error.Code, shape.Error.Message, shape.Error.Details, shape.Running
		return e
	}
	e.Code = "http_" + strconv.Itoa(resp.StatusCode)
	e.Message = strings.TrimSpace(string(body))
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// do performs a JSON call and decodes the answer into out (when not nil).
// It returns the status, since some routes answer 200 or 202.
func (c *Client) do(ctx context.Context, method, p string, query url.Values, in, out any) (int, error) {
	r := request{method: method, path: p, query: query}
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		r.body, r.ctype = bytes.NewReader(data), "application/json"
	}
	return c.roundTrip(ctx, r, out)
}

func (c *Client) roundTrip(ctx context.Context, r request, out any) (int, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: decode answer: %w", r.method, r.path, err)
	}
	return resp.StatusCode, nil
}

// raw performs a call and returns the body and its media type.
func (c *Client) raw(ctx context.Context, r request) ([]byte, string, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return data, mt, nil
}

func docRequest(method, p string, doc *Document) request {
	r := request{method: method, path: p}
	if doc != nil {
		r.body, r.ctype = bytes.NewReader(doc.Data), doc.ContentType()
	}
	return r
}

func esc(s string) string { return url.PathEscape(s) }

// Probes.

// Health checks /healthz.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/healthz", nil, nil, nil)
	return err
}

// Ready checks /readyz; the APIError's details name what is unreachable.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/readyz", nil, nil, nil)
	return err
}

// Metrics returns the Prometheus exposition.
func (c *Client) Metrics(ctx context.Context) ([]byte, error) {
	data, _, err := c.raw(ctx, request{method: http.MethodGet, path: "/metrics", accept: "text/plain"})
	return data, err
}

// OpenAPI returns the server's OpenAPI document.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	data, _, err := c.raw(ctx, request{method: http.MethodGet, path: "/openapi.yaml", accept: "application/yaml"})
	return data, err
}

// Packages.

// Validate validates a package. An invalid package is an *APIError (422)
// with every error in Details.
func (c *Client) Validate(ctx context.Context, doc Document) (*model.PackageSummary, error) {
	var out model.PackageSummary
	_, err := c.roundTrip(ctx, docRequest(http.MethodPost, "/v1/packages/validate", &doc), &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Export returns a package of existing resources in format "yaml" or
// "json".
func (c *Client) Export(ctx context.Context, req model.ExportRequest, format string) ([]byte, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	accept := "application/yaml"
	if format == "json" {
		accept = "application/json"
	}
	out, _, err := c.raw(ctx, request{method: http.MethodPost, path: "/v1/export", body: bytes.NewReader(data), ctype: "application/json", accept: accept})
	return out, err
}

// Stacks.

// CreateStack creates a stack.
func (c *Client) CreateStack(ctx context.Context, in model.StackInput) (*model.StackRecord, error) {
	var out model.StackRecord
	if _, err := c.do(ctx, http.MethodPost, "/v1/stacks", nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListStacks lists every stack.
func (c *Client) ListStacks(ctx context.Context) ([]model.StackRecord, error) {
	var out model.StackList
	if _, err := c.do(ctx, http.MethodGet, "/v1/stacks", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Stacks, nil
}

// StacksNamed lists the stacks of one name.
func (c *Client) StacksNamed(ctx context.Context, name string) ([]model.StackRecord, error) {
	var out model.StackList
	if _, err := c.do(ctx, http.MethodGet, "/v1/stacks", url.Values{"name": {name}}, nil, &out); err != nil {
		return nil, err
	}
	return out.Stacks, nil
}

// GetStack returns a stack record.
func (c *Client) GetStack(ctx context.Context, id string) (*model.StackRecord, error) {
	var out model.StackRecord
	if _, err := c.do(ctx, http.MethodGet, "/v1/stacks/"+esc(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteOptions steer a stack's destroy.
type DeleteOptions struct {
	Wait bool
	// Cluster is the cluster whose nodes hold the stack's targeted
	// resources.
	Cluster string
}

// DeleteStack starts destroying a stack's resources; its record goes once
// they are gone. With opts.Wait it answers when the destroy has finished.
func (c *Client) DeleteStack(ctx context.Context, id string, opts DeleteOptions) (*model.Execution, error) {
	var out model.Execution
	q := url.Values{}
	if opts.Wait {
		q.Set("wait", "true")
	}
	if opts.Cluster != "" {
		q.Set("cluster", opts.Cluster)
	}
	if _, err := c.do(ctx, http.MethodDelete, "/v1/stacks/"+esc(id), q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DryRunOptions steer a dry-run.
type DryRunOptions struct {
	Parallelism int
	Cluster     string
	// RunGuards has the dry-run run exec guard commands (unless,
	// onlyif); without it the plan runs no command.
	RunGuards bool
	// Params are env ref values and secrets for this dry-run, as in
	// ApplyOptions.
	Params model.ApplyParams
}

// DryRun plans a package against a stack; a nil doc plans the stack's
// URLs. When the server's wait bound passes first, the plan is nil and
// the running execution is returned. An invalid package is an *APIError
// (422) whose Body also holds the summary of what could be read.
//
// A package over SingleRequestBytes, or one the server answers 413 to, is
// sent as an upload in parts first (see Upload).
func (c *Client) DryRun(ctx context.Context, stackID string, doc *Document, opts DryRunOptions) (*model.DryRun, *model.Execution, error) {
	var plan *model.DryRun
	var ex *model.Execution
	err := c.withPackage(ctx, stackID, doc, func(doc *Document) error {
		var err error
		plan, ex, err = c.dryRun(ctx, stackID, doc, opts)
		return err
	})
	return plan, ex, err
}

func (c *Client) dryRun(ctx context.Context, stackID string, doc *Document, opts DryRunOptions) (*model.DryRun, *model.Execution, error) {
	doc, err := withParams(doc, opts.Params)
	if err != nil {
		return nil, nil, fmt.Errorf("dry-run: %w", err)
	}
	r := docRequest(http.MethodPost, "/v1/stacks/"+esc(stackID)+"/dry-run", doc)
	r.query = url.Values{}
	if opts.Parallelism > 0 {
		r.query.Set("parallelism", strconv.Itoa(opts.Parallelism))
	}
	if opts.Cluster != "" {
		r.query.Set("cluster", opts.Cluster)
	}
	if opts.RunGuards {
		r.query.Set("guards", "true")
	}
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		var ex model.Execution
		if err := json.NewDecoder(resp.Body).Decode(&ex); err != nil {
			return nil, nil, fmt.Errorf("dry-run: decode answer: %w", err)
		}
		return nil, &ex, nil
	}
	var out model.DryRun
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("dry-run: decode answer: %w", err)
	}
	return &out, nil, nil
}

// Apply applies a package to a stack; a nil doc applies the stack's URLs.
// With opts.Wait the execution comes back finished (unless the server's
// wait bound passed first). A package over SingleRequestBytes, or one the
// server answers 413 to, is sent as an upload in parts first (see
// Upload).
func (c *Client) Apply(ctx context.Context, stackID string, doc *Document, opts ApplyOptions) (*model.Execution, error) {
	var ex *model.Execution
	err := c.withPackage(ctx, stackID, doc, func(doc *Document) error {
		var err error
		ex, err = c.apply(ctx, stackID, doc, opts)
		return err
	})
	return ex, err
}

func (c *Client) apply(ctx context.Context, stackID string, doc *Document, opts ApplyOptions) (*model.Execution, error) {
	doc, err := withParams(doc, opts.Params)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	r := docRequest(http.MethodPost, "/v1/stacks/"+esc(stackID)+"/apply", doc)
	r.query = url.Values{}
	if opts.Wait {
		r.query.Set("wait", "true")
	}
	if opts.OnFailure != "" {
		r.query.Set("onFailure", string(opts.OnFailure))
	}
	if opts.Parallelism > 0 {
		r.query.Set("parallelism", strconv.Itoa(opts.Parallelism))
	}
	if opts.Cluster != "" {
		r.query.Set("cluster", opts.Cluster)
	}
	if opts.ApproveRequired {
		r.query.Set("approve", "required")
		if opts.ApprovalTimeout > 0 {
			r.query.Set("approvalTimeout", opts.ApprovalTimeout.String())
		}
	}
	var out model.Execution
	if _, err := c.roundTrip(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Releases, plugins, clusters.

func (c *Client) CreateRelease(ctx context.Context, in model.ReleaseInput) (*model.Release, error) {
	var out model.Release
	_, err := c.do(ctx, http.MethodPost, "/v1/releases", nil, in, &out)
	return orNil(&out, err)
}

func (c *Client) ListReleases(ctx context.Context) ([]*model.Release, error) {
	var out model.ReleaseList
	_, err := c.do(ctx, http.MethodGet, "/v1/releases", nil, nil, &out)
	return out.Releases, err
}

func (c *Client) GetRelease(ctx context.Context, id string) (*model.Release, error) {
	var out model.Release
	_, err := c.do(ctx, http.MethodGet, "/v1/releases/"+esc(id), nil, nil, &out)
	return orNil(&out, err)
}

func (c *Client) UpdateRelease(ctx context.Context, id string, in model.ReleaseInput) (*model.Release, error) {
	var out model.Release
	_, err := c.do(ctx, http.MethodPut, "/v1/releases/"+esc(id), nil, in, &out)
	return orNil(&out, err)
}

func (c *Client) DeleteRelease(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/releases/"+esc(id), nil, nil, nil)
	return err
}

func (c *Client) CreatePlugin(ctx context.Context, in model.PluginInput) (*model.Plugin, error) {
	var out model.Plugin
	_, err := c.do(ctx, http.MethodPost, "/v1/plugins", nil, in, &out)
	return orNil(&out, err)
}

func (c *Client) ListPlugins(ctx context.Context) ([]*model.Plugin, error) {
	var out model.PluginList
	_, err := c.do(ctx, http.MethodGet, "/v1/plugins", nil, nil, &out)
	return out.Plugins, err
}

func (c *Client) GetPlugin(ctx context.Context, id string) (*model.Plugin, error) {
	var out model.Plugin
	_, err := c.do(ctx, http.MethodGet, "/v1/plugins/"+esc(id), nil, nil, &out)
	return orNil(&out, err)
}

func (c *Client) UpdatePlugin(ctx context.Context, id string, in model.PluginInput) (*model.Plugin, error) {
	var out model.Plugin
	_, err := c.do(ctx, http.MethodPut, "/v1/plugins/"+esc(id), nil, in, &out)
	return orNil(&out, err)
}

func (c *Client) DeletePlugin(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/plugins/"+esc(id), nil, nil, nil)
	return err
}

func (c *Client) CreateCluster(ctx context.Context, in model.ClusterInput) (*model.Cluster, error) {
	var out model.Cluster
	_, err := c.do(ctx, http.MethodPost, "/v1/clusters", nil, in, &out)
	return orNil(&out, err)
}

func (c *Client) ListClusters(ctx context.Context) ([]*model.Cluster, error) {
	var out model.ClusterList
	_, err := c.do(ctx, http.MethodGet, "/v1/clusters", nil, nil, &out)
	return out.Clusters, err
}

func (c *Client) GetCluster(ctx context.Context, id string) (*model.Cluster, error) {
	var out model.Cluster
	_, err := c.do(ctx, http.MethodGet, "/v1/clusters/"+esc(id), nil, nil, &out)
	return orNil(&out, err)
}

func (c *Client) UpdateCluster(ctx context.Context, id string, in model.ClusterInput) (*model.Cluster, error) {
	var out model.Cluster
	_, err := c.do(ctx, http.MethodPut, "/v1/clusters/"+esc(id), nil, in, &out)
	return orNil(&out, err)
}

func (c *Client) DeleteCluster(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/clusters/"+esc(id), nil, nil, nil)
	return err
}

// IssueNodeToken issues the token `cairn agent` serves an agent node
// with, revoking the node's previous one; the server keeps only its hash,
// so this answer is the only place it is shown.
func (c *Client) IssueNodeToken(ctx context.Context, clusterID, nodeID string) (*model.NodeToken, error) {
	var out model.NodeToken
	_, err := c.do(ctx, http.MethodPost, "/v1/clusters/"+esc(clusterID)+"/nodes/"+esc(nodeID)+"/token", nil, nil, &out)
	return orNil(&out, err)
}

func orNil[T any](v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Graphs.

// ownerPath is "/v1/{releases|clusters|plugins}/{id}".
func ownerPath(layer model.Layer, ownerID string) (string, error) {
	switch layer {
	case model.LayerRelease, model.LayerCluster, model.LayerPlugin:
		return "/v1/" + string(layer) + "s/" + esc(ownerID), nil
	}
	return "", fmt.Errorf("unknown graph layer %q (want release, cluster or plugin)", layer)
}

// ListGraphs lists an owner's graphs.
func (c *Client) ListGraphs(ctx context.Context, layer model.Layer, ownerID string) ([]model.GraphInfo, error) {
	p, err := ownerPath(layer, ownerID)
	if err != nil {
		return nil, err
	}
	var out model.GraphInfoList
	_, err = c.do(ctx, http.MethodGet, p+"/graphs", nil, nil, &out)
	return out.Graphs, err
}

// GetGraph downloads an owner's graph of a type. format "" returns the
// source as uploaded; "yaml" or "json" re-encodes it. The media type of
// the answer is returned with it.
func (c *Client) GetGraph(ctx context.Context, layer model.Layer, ownerID, graphType, format string) ([]byte, string, error) {
	p, err := ownerPath(layer, ownerID)
	if err != nil {
		return nil, "", err
	}
	return c.raw(ctx, request{method: http.MethodGet, path: p + "/graphs/" + esc(graphType), accept: acceptFor(format)})
}

// PutGraph uploads (replaces) an owner's graph of a type.
func (c *Client) PutGraph(ctx context.Context, layer model.Layer, ownerID, graphType string, doc Document) (*model.GraphInfo, error) {
	p, err := ownerPath(layer, ownerID)
	if err != nil {
		return nil, err
	}
	var out model.GraphInfo
	_, err = c.roundTrip(ctx, docRequest(http.MethodPut, p+"/graphs/"+esc(graphType), &doc), &out)
	return orNil(&out, err)
}

// DeleteGraph deletes an owner's graph of a type.
func (c *Client) DeleteGraph(ctx context.Context, layer model.Layer, ownerID, graphType string) error {
	p, err := ownerPath(layer, ownerID)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodDelete, p+"/graphs/"+esc(graphType), nil, nil, nil)
	return err
}

// MergedGraph downloads a cluster's merged graph of a type ("yaml" by
// default, or "json").
func (c *Client) MergedGraph(ctx context.Context, clusterID, graphType, format string) ([]byte, error) {
	return c.MergedLayers(ctx, clusterID, graphType, format, nil)
}

// MergedLayers is MergedGraph over some layers only (nil: all), such as
// Fuel's download of the release and cluster graphs merged, or of the
// cluster's plugins' graphs. A partial merge is not validated.
func (c *Client) MergedLayers(ctx context.Context, clusterID, graphType, format string, layers []model.Layer) ([]byte, error) {
	if format == "" {
		format = "yaml"
	}
	var q url.Values
	if len(layers) > 0 {
		names := make([]string, len(layers))
		for i, l := range layers {
			names[i] = string(l)
		}
		q = url.Values{"layers": {strings.Join(names, ",")}}
	}
	data, _, err := c.raw(ctx, request{method: http.MethodGet,
		path: "/v1/clusters/" + esc(clusterID) + "/graphs/" + esc(graphType) + "/merged", query: q, accept: acceptFor(format)})
	return data, err
}

func acceptFor(format string) string {
	switch format {
	case "json":
		return "application/json"
	case "yaml":
		return "application/yaml"
	case "jsonnet":
		return "application/jsonnet"
	}
	return "*/*"
}

// Executions.

// ExecuteGraph starts a graph execution on a cluster; req carries the
// fields a client sends (the server fills the rest).
func (c *Client) ExecuteGraph(ctx context.Context, clusterID string, req contract.GraphRequest) (*model.Execution, error) {
	var out model.Execution
	_, err := c.do(ctx, http.MethodPost, "/v1/clusters/"+esc(clusterID)+"/executions", nil, req, &out)
	return orNil(&out, err)
}

// ListExecutions lists executions, newest first.
func (c *Client) ListExecutions(ctx context.Context, f ExecutionFilter) (*model.ExecutionList, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("stack", f.Stack)
	set("cluster", f.Cluster)
	set("type", string(f.Kind))
	set("status", string(f.Status))
	set("pageToken", f.PageToken)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out model.ExecutionList
	_, err := c.do(ctx, http.MethodGet, "/v1/executions", q, nil, &out)
	return orNil(&out, err)
}

// GetExecution returns an execution with its steps and report or plan.
func (c *Client) GetExecution(ctx context.Context, id string) (*model.Execution, error) {
	var out model.Execution
	_, err := c.do(ctx, http.MethodGet, "/v1/executions/"+esc(id), nil, nil, &out)
	return orNil(&out, err)
}

// ExecutionGraph returns an execution's steps, each with the steps it
// waits for (404 until the execution has prepared its plan).
func (c *Client) ExecutionGraph(ctx context.Context, id string) ([]model.StepDeps, error) {
	var out model.ExecutionGraph
	if _, err := c.do(ctx, http.MethodGet, "/v1/executions/"+esc(id)+"/graph", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Steps, nil
}

// Cancel asks a running execution to stop.
func (c *Client) Cancel(ctx context.Context, id string) (*model.Execution, error) {
	var out model.Execution
	_, err := c.do(ctx, http.MethodPost, "/v1/executions/"+esc(id)+"/cancel", nil, nil, &out)
	return orNil(&out, err)
}

// Retry runs a finished, unsuccessful execution again as a new execution.
func (c *Client) Retry(ctx context.Context, id string) (*model.Execution, error) {
	var out model.Execution
	_, err := c.do(ctx, http.MethodPost, "/v1/executions/"+esc(id)+"/retry", nil, nil, &out)
	return orNil(&out, err)
}

// Approve approves a plan awaiting approval: it answers once the plan was
// found to hold and its apply started (Approval.ApplyExecutionID); a plan
// that moved answers 409 naming what moved.
func (c *Client) Approve(ctx context.Context, id, comment string) (*model.Approval, error) {
	return c.approval(ctx, id, "approve", comment)
}

// Reject rejects a plan awaiting approval; it ends having changed nothing.
func (c *Client) Reject(ctx context.Context, id, comment string) (*model.Approval, error) {
	return c.approval(ctx, id, "reject", comment)
}

func (c *Client) approval(ctx context.Context, id, verb, comment string) (*model.Approval, error) {
	var out model.Approval
	_, err := c.do(ctx, http.MethodPost, "/v1/executions/"+esc(id)+"/"+verb, nil, map[string]string{"comment": comment}, &out)
	return orNil(&out, err)
}

// Decide answers a paused execution.
func (c *Client) Decide(ctx context.Context, id string, d model.DecisionRequest) (*model.DecisionResult, error) {
	var out model.DecisionResult
	_, err := c.do(ctx, http.MethodPost, "/v1/executions/"+esc(id)+"/decision", nil, d, &out)
	return orNil(&out, err)
}
