package providers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// httpProvider manages one object in a REST API (pkger's platform objects
// and anything shaped like them): created by POST to a collection, then
// read, updated and deleted by the id the create answered with. Only the
// body fields the spec sets are compared, so fields the server adds never
// show as changes. Links are sub-objects tying the object to others (pkger
// label mappings), compared as a set of ids.
//
// Headers carry credentials (secret refs are resolved before the provider
// sees the spec), so they never enter a State: what a State keeps to find
// the object again (State.Private) is the address without headers.
type httpProvider struct {
	client *http.Client
}

// NewHTTP returns the provider of kind http. A nil client means one with a
// 60-second overall timeout per request.
func NewHTTP(client *http.Client) Provider {
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	return &httpProvider{client: client}
}

func (*httpProvider) Kind() string { return "http" }

var httpAttrs = map[string]kinds.AttrKind{
	"url": kinds.Parameter, "path": kinds.Parameter, "listPath": kinds.Parameter,
	"readPath": kinds.Parameter, "updatePath": kinds.Parameter, "deletePath": kinds.Parameter,
	"headers": kinds.Parameter, "updateMethod": kinds.Parameter, "expect": kinds.Parameter,
	"listPointer": kinds.Parameter, "idPointer": kinds.Parameter,
	// id names an existing object to manage (adopted, not created): an
	// exported object carries its own.
	"id":   kinds.Parameter,
	"body": kinds.Property, "links": kinds.Property,
}

func (*httpProvider) Attributes() map[string]kinds.AttrKind { return httpAttrs }

// httpMaxResponse bounds how much of a response is read.
const httpMaxResponse = 10 << 20

// httpMaxListed bounds the objects one listing describes (a response is
// bounded in bytes too, by httpMaxResponse).
const httpMaxListed = 10000

// httpSnippet bounds the part of a response body an error message quotes.
const httpSnippet = 512

// httpDefaultExpect are the statuses accepted per operation.
var httpDefaultExpect = map[string][]int{
	"create": {200, 201},
	"read":   {200},
	"update": {200, 204},
	"delete": {200, 204, 404},
	"list":   {200},
}

// httpSpec is a canonical http spec.
type httpSpec struct {
	URL          string            `json:"url"`
	Path         string            `json:"path"`
	ListPath     string            `json:"listPath,omitempty"`
	ReadPath     string            `json:"readPath,omitempty"`
	UpdatePath   string            `json:"updatePath,omitempty"`
	DeletePath   string            `json:"deletePath,omitempty"`
	Body         map[string]any    `json:"body,omitempty"`
	IDPointer    string            `json:"idPointer,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	UpdateMethod string            `json:"updateMethod,omitempty"`
	Expect       map[string][]int  `json:"expect,omitempty"`
	ListPointer  string            `json:"listPointer,omitempty"`
	Links        *httpLinks        `json:"links,omitempty"`
	ID           string            `json:"id,omitempty"`
}

type httpLinks struct {
	Path  string   `json:"path"`
	Field string   `json:"field"`
	IDs   []string `json:"ids"`
}

// parseHTTPSpec reads a spec into its struct, checking what a schema
// cannot (URL syntax, pointer and template forms).
func parseHTTPSpec(spec model.Spec) (*httpSpec, error) {
	if err := checkAttrs("http", spec, httpAttrs); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, configErrorf("", "spec is not JSON: %v", err)
	}
	var s httpSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, configErrorf(te.Field, "want %s, got a JSON %s", te.Type, te.Value)
		}
		return nil, configErrorf("", "%v", err)
	}
	if b, ok := NormalizeValue(spec["body"]).(map[string]any); ok {
		s.Body = b // keeps integers exact, where a JSON round trip makes them float64
	}
	if s.URL == "" {
		return nil, configErrorf("url", "required (the API's base URL)")
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, configErrorf("url", "want an absolute http(s) URL, got %q", s.URL)
	}
	if s.URL, err = CanonicalURL(s.URL); err != nil {
		return nil, configErrorf("url", "%v", err)
	}
	if s.Path == "" {
		return nil, configErrorf("path", "required (the collection path, e.g. /api/v2/labels)")
	}
	s.Path = "/" + strings.Trim(s.Path, "/")
	if s.ListPath != "" {
		s.ListPath = "/" + strings.TrimLeft(s.ListPath, "/")
	}
	for attr, ptr := range map[string]string{"idPointer": s.IDPointer, "listPointer": s.ListPointer} {
		if ptr != "" && !strings.HasPrefix(ptr, "/") {
			return nil, configErrorf(attr, "JSON pointer %q must start with /", ptr)
		}
	}
	s.UpdateMethod = strings.ToUpper(s.UpdateMethod)
	switch s.UpdateMethod {
	case "", http.MethodPatch, http.MethodPut:
	default:
		return nil, configErrorf("updateMethod", "want PUT or PATCH, got %q", s.UpdateMethod)
	}
	for op, codes := range s.Expect {
		if _, ok := httpDefaultExpect[op]; !ok {
			return nil, configErrorf("expect."+op, "unknown operation (want create, read, update, delete or list)")
		}
		for _, c := range codes {
			if c < 100 || c > 599 {
				return nil, configErrorf("expect."+op, "status %d out of range 100-599", c)
			}
		}
		slices.Sort(codes)
		s.Expect[op] = slices.Compact(codes)
	}
	if l := s.Links; l != nil {
		if l.Path == "" || l.Field == "" {
			return nil, configErrorf("links", "path and field are required")
		}
		l.Path = "/" + strings.Trim(l.Path, "/")
		ids := make([]string, 0, len(l.IDs))
		for _, id := range l.IDs {
			if id != "" {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		l.IDs = slices.Compact(ids)
	}
	return &s, nil
}

// Canonicalize checks the spec and writes it in one form: the URL without
// a trailing slash, paths with one leading slash, updateMethod upper case,
// expected statuses and link ids sorted without duplicates.
func (*httpProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	s, err := parseHTTPSpec(spec)
	if err != nil {
		return nil, err
	}
	out := NormalizeSpec(spec)
	out["url"], out["path"] = s.URL, s.Path
	if s.ListPath != "" {
		out["listPath"] = s.ListPath
	}
	if s.UpdateMethod != "" {
		out["updateMethod"] = s.UpdateMethod
	}
	if s.Expect != nil {
		expect := map[string]any{}
		for op, codes := range s.Expect {
			expect[op] = intsToAny(codes)
		}
		out["expect"] = expect
	}
	if s.Links != nil {
		out["links"] = s.Links.attr(s.Links.IDs)
	}
	return out, nil
}

func (l *httpLinks) attr(ids []string) map[string]any {
	list := make([]any, len(ids))
	for i, id := range ids {
		list[i] = id
	}
	return map[string]any{"path": l.Path, "field": l.Field, "ids": list}
}

// Read fetches the object the stack recorded (env.ObjectID, else the
// spec's id). Without an id the object does not exist yet; a 404 means it
// is gone.
func (p *httpProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	if len(want) == 0 {
		return State{}, configErrorf("", "cannot find http object %s (id %q) without its spec: url and path say where it lives", env.Name, env.ObjectID)
	}
	s, err := parseHTTPSpec(want)
	if err != nil {
		return State{}, err
	}
	id := cmp.Or(env.ObjectID, s.ID)
	if id == "" && env.Resumed {
		// An earlier attempt may have created the object and died before
		// its id was recorded: find it instead of creating a second.
		return p.findCreated(ctx, s)
	}
	return p.read(ctx, s, id)
}

func (p *httpProvider) read(ctx context.Context, s *httpSpec, id string) (State, error) {
	if id == "" {
		return State{}, nil
	}
	status, obj, err := p.do(ctx, s, "read", http.MethodGet, s.target(s.ReadPath, id), nil, true)
	if err != nil {
		return State{}, err
	}
	if status == http.StatusNotFound {
		return State{}, nil
	}
	full, ok := obj.(map[string]any)
	if !ok {
		return State{}, fmt.Errorf("GET %s: want a JSON object, got %s", redactURL(s.target(s.ReadPath, id)), nested.Describe(obj))
	}
	attrs := map[string]any{"body": pickFields(map[string]any(s.Body), full).(map[string]any)}
	if s.IDPointer != "" {
		// Where the create answer held the id cannot be read back; it is
		// echoed so that a catalogue marking it init-only sees no change.
		attrs["idPointer"] = s.IDPointer
	}
	if s.Links != nil {
		ids, err := p.linkIDs(ctx, s, id)
		if err != nil {
			return State{}, err
		}
		attrs["links"] = s.Links.attr(ids)
	}
	return State{
		Exists:  true,
		ID:      id,
		Attrs:   attrs,
		Outputs: map[string]any{"id": id, "body": full},
		Private: s.address(),
	}, nil
}

// Apply creates the object (POST to the collection, id from the response)
// or updates its body when the managed fields differ, then adds and removes
// links to reach the desired set, and reads the result back. A create whose
// links then fail is deleted again, so a retry starts from nothing instead
// of leaving an object the stack never recorded.
func (p *httpProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	s, err := parseHTTPSpec(want)
	if err != nil {
		return State{}, err
	}
	if env.Noop {
		return have, nil
	}
	id := have.ID
	var current []string
	if !have.Exists {
		if id, err = p.create(ctx, withIntent(s, env.Intent), s.Body); err != nil {
			return State{}, err
		}
	} else {
		body, _ := have.Attrs["body"].(map[string]any)
		if !EqualValues(body, map[string]any(s.Body)) {
			if err := p.update(ctx, s, id, s.Body); err != nil {
				return State{}, err
			}
		}
		current = stateLinkIDs(have)
	}
	if s.Links != nil {
		if err := p.syncLinks(ctx, s, id, current, s.Links.IDs); err != nil {
			if !have.Exists {
				if derr := p.deleteObject(context.WithoutCancel(ctx), s, id); derr != nil {
					err = fmt.Errorf("%w (and deleting the object %s just created failed: %v)", err, id, derr)
				}
			}
			return State{}, err
		}
	}
	after, err := p.read(ctx, s, id)
	if err != nil {
		return State{}, err
	}
	if !after.Exists {
		return State{}, fmt.Errorf("GET %s: object %s is gone right after it was written", redactURL(s.target(s.ReadPath, id)), id)
	}
	return after, nil
}

// Delete removes the object found by the address the read kept. Headers
// are not kept in a State, so an API that needs them must be reached
// through DeleteSpec, which the engine calls when it has the spec.
func (p *httpProvider) Delete(ctx context.Context, env Env, have State) error {
	return p.DeleteSpec(ctx, env, nil, have)
}

// DeleteSpec removes the object have describes, addressed and
// authenticated by want (the resource's canonical spec) when it is given,
// else by the address kept in have. Deleting what is absent is not an
// error.
func (p *httpProvider) DeleteSpec(ctx context.Context, env Env, want model.Spec, have State) error {
	if !have.Exists || have.ID == "" {
		return nil
	}
	s, err := httpSpecFor(want, have)
	if err != nil {
		return err
	}
	if env.Noop {
		return nil
	}
	return p.deleteObject(ctx, s, have.ID)
}

// httpSpecFor is want parsed, or the address a State kept.
func httpSpecFor(want model.Spec, st State) (*httpSpec, error) {
	if want["url"] != nil {
		return parseHTTPSpec(want)
	}
	if len(st.Private) == 0 {
		return nil, configErrorf("", "no spec and no recorded address to find object %s", st.ID)
	}
	var s httpSpec
	if err := json.Unmarshal(st.Private, &s); err != nil {
		return nil, fmt.Errorf("recorded address of object %s: %w", st.ID, err)
	}
	return &s, nil
}

// Reversible: every http change can be undone (a deleted object comes back
// with a new id).
func (*httpProvider) Reversible(model.Spec) bool { return true }

// Compensate undoes ch: a created object is deleted, an updated one gets its
// previous managed body and links back, a deleted one is created again
// (with a new id, which is logged; CompensateState returns it).
func (p *httpProvider) Compensate(ctx context.Context, env Env, want model.Spec, ch Change) error {
	_, err := p.CompensateState(ctx, env, want, ch)
	return err
}

// CompensateState is Compensate returning the state it left: for a
// recreated object the new id the stack must record.
func (p *httpProvider) CompensateState(ctx context.Context, env Env, want model.Spec, ch Change) (State, error) {
	if ch.Noop || ch.Action == model.ActionNoop || ch.Action == "" {
		return ch.Before, nil
	}
	s, err := httpSpecFor(want, firstExisting(ch.Before, ch.After))
	if err != nil {
		return State{}, err
	}
	switch {
	case !ch.Before.Exists:
		// Created by the change: remove it.
		id := cmp.Or(ch.After.ID, env.ObjectID)
		if id == "" {
			return State{}, nil
		}
		return State{}, p.deleteObject(ctx, s, id)
	case ch.Action == model.ActionDelete || !ch.After.Exists:
		// Deleted by the change: create it again from the fields it had.
		body, _ := ch.Before.Attrs["body"].(map[string]any)
		if len(body) == 0 {
			body = s.Body
		}
		id, err := p.create(ctx, s, body)
		if err != nil {
			return State{}, err
		}
		if s.Links != nil {
			if err := p.syncLinks(ctx, s, id, nil, stateLinkIDs(ch.Before)); err != nil {
				return State{}, err
			}
		}
		slog.InfoContext(ctx, "http object recreated with a new id", "resource", env.Name, "oldID", ch.Before.ID, "newID", id)
		return p.read(ctx, s, id)
	default:
		// Updated by the change: put the previous managed fields and links back.
		id := ch.Before.ID
		prev, _ := ch.Before.Attrs["body"].(map[string]any)
		now, err := p.read(ctx, s, id)
		if err != nil {
			return State{}, err
		}
		if !now.Exists {
			return State{}, fmt.Errorf("object %s to restore is gone", id)
		}
		if body, _ := now.Attrs["body"].(map[string]any); len(prev) > 0 && !EqualValues(body, prev) {
			if err := p.update(ctx, s, id, prev); err != nil {
				return State{}, err
			}
		}
		if s.Links != nil && ch.Before.Attrs["links"] != nil {
			if err := p.syncLinks(ctx, s, id, stateLinkIDs(now), stateLinkIDs(ch.Before)); err != nil {
				return State{}, err
			}
		}
		return p.read(ctx, s, id)
	}
}

func firstExisting(states ...State) State {
	for _, st := range states {
		if st.Exists {
			return st
		}
	}
	return states[0]
}

// List lists the collection q.Spec addresses (see ListObjects). The body
// fields exported are the keys of q.Spec's body when it names any; q.Names
// keeps only the objects of those names.
func (p *httpProvider) List(ctx context.Context, env Env, q ListQuery) ([]Listed, error) {
	if q.Spec["url"] == nil {
		return nil, configErrorf("url", "listing http objects needs a spec with url and path")
	}
	if len(q.Labels) > 0 && q.Spec["links"] == nil {
		return nil, configErrorf("links", "listing http objects by label needs the spec's links (path and field): how objects link to labels")
	}
	var fields []string
	if body, ok := q.Spec["body"].(map[string]any); ok {
		fields = slices.Sorted(maps.Keys(body))
	}
	items, err := p.ListObjects(ctx, env, q.Spec, fields)
	if err != nil || len(q.Names) == 0 {
		return items, err
	}
	return slices.DeleteFunc(items, func(l Listed) bool { return !slices.Contains(q.Names, l.Name) }), nil
}

// ListObjects lists the collection (GET listPath or path) and returns each
// object as a resource whose spec reproduces it: the spec's addressing
// without headers, the object's id, and a body of the named fields (all but
// "id" when fields is empty). An object is named by its "name" field, else
// its id; Listed.ID is its id. The spec's id makes a resource of it adopt
// the object (Read finds it by that id) rather than create another. When
// the spec has links, each object's links are read too (one GET each) and
// exported, and are its Listed.Labels. A collection of more than
// httpMaxListed objects is refused.
func (p *httpProvider) ListObjects(ctx context.Context, env Env, spec model.Spec, fields []string) ([]Listed, error) {
	s, err := parseHTTPSpec(spec)
	if err != nil {
		return nil, err
	}
	target := s.URL + cmp.Or(s.ListPath, s.Path)
	_, body, err := p.do(ctx, s, "list", http.MethodGet, target, nil, false)
	if err != nil {
		return nil, err
	}
	items, err := httpArrayAt(body, s.ListPointer, lastSegment(cmp.Or(s.ListPath, s.Path)))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", redactURL(target), err)
	}
	base := NormalizeSpec(spec)
	delete(base, "headers")
	delete(base, "body")
	delete(base, "links")
	delete(base, "id")
	if len(items) > httpMaxListed {
		return nil, fmt.Errorf("GET %s: %d objects, more than the %d a listing reads", redactURL(target), len(items), httpMaxListed)
	}
	var out []Listed
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("GET %s: item %d is %s, not an object", redactURL(target), i, nested.Describe(item))
		}
		id, err := idString(obj["id"])
		if err != nil {
			return nil, fmt.Errorf("GET %s: item %d: %w", redactURL(target), i, err)
		}
		body := map[string]any{}
		if len(fields) == 0 {
			for k, v := range obj {
				if k != "id" {
					body[k] = v
				}
			}
		} else {
			for _, f := range fields {
				if v, ok := obj[f]; ok {
					body[f] = v
				}
			}
		}
		ls := copyMap(base)
		ls["id"], ls["body"] = id, NormalizeValue(body)
		var labels, labelNames []string
		if s.Links != nil {
			// One request per object: the links live under each.
			if labels, labelNames, err = p.links(ctx, s, id); err != nil {
				return nil, err
			}
			ls["links"] = s.Links.attr(labels)
		}
		name, _ := obj["name"].(string)
		out = append(out, Listed{Name: cmp.Or(name, id), ID: id, Labels: labels, LabelNames: labelNames, Spec: ls})
	}
	return out, nil
}

// --- operations ---

func (p *httpProvider) create(ctx context.Context, s *httpSpec, body map[string]any) (string, error) {
	target := s.URL + s.Path
	_, resp, err := p.do(ctx, s, "create", http.MethodPost, target, orEmpty(body), false)
	if err != nil {
		return "", err
	}
	ptr := cmp.Or(s.IDPointer, "/id")
	v, err := jsonPointer(resp, ptr)
	if err == nil {
		var id string
		if id, err = idString(v); err == nil {
			return id, nil
		}
	}
	// The object may exist now without an id to find it by: retrying
	// would create another, so this is for a person to fix.
	return "", &ConfigError{Attr: "idPointer", Err: fmt.Errorf("POST %s: no id at %s in the response: %v", redactURL(target), ptr, err)}
}

func (p *httpProvider) update(ctx context.Context, s *httpSpec, id string, body map[string]any) error {
	method := cmp.Or(s.UpdateMethod, http.MethodPatch)
	_, _, err := p.do(ctx, s, "update", method, s.target(s.UpdatePath, id), orEmpty(body), false)
	return err
}

func (p *httpProvider) deleteObject(ctx context.Context, s *httpSpec, id string) error {
	_, _, err := p.do(ctx, s, "delete", http.MethodDelete, s.target(s.DeletePath, id), nil, false)
	return err
}

// linkIDs lists the ids linked to object id: GET {object}{links.path},
// the array at /<last segment of links.path> or the whole body.
func (p *httpProvider) linkIDs(ctx context.Context, s *httpSpec, id string) ([]string, error) {
	ids, _, err := p.links(ctx, s, id)
	return ids, err
}

// links reads the ids of the labels the object id is linked to, sorted,
// and the names of those the platform names (a link object's "name").
func (p *httpProvider) links(ctx context.Context, s *httpSpec, id string) (ids, names []string, _ error) {
	target := s.target(s.ReadPath, id) + s.Links.Path
	_, body, err := p.do(ctx, s, "list", http.MethodGet, target, nil, false)
	if err != nil {
		return nil, nil, err
	}
	items, err := httpArrayAt(body, "", lastSegment(s.Links.Path))
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", redactURL(target), err)
	}
	ids = make([]string, 0, len(items))
	for i, item := range items {
		v := item
		if obj, ok := item.(map[string]any); ok {
			v = obj["id"]
			if name, ok := obj["name"].(string); ok && name != "" {
				names = append(names, name)
			}
		}
		lid, err := idString(v)
		if err != nil {
			return nil, nil, fmt.Errorf("GET %s: link %d: %w", redactURL(target), i, err)
		}
		ids = append(ids, lid)
	}
	slices.Sort(ids)
	slices.Sort(names)
	return slices.Compact(ids), slices.Compact(names), nil
}

// syncLinks adds the ids in want and not in have, and removes the rest.
func (p *httpProvider) syncLinks(ctx context.Context, s *httpSpec, id string, have, want []string) error {
	base := s.target(s.ReadPath, id) + s.Links.Path
	for _, lid := range want {
		if slices.Contains(have, lid) {
			continue
		}
		if _, _, err := p.do(ctx, s, "link", http.MethodPost, base, map[string]any{s.Links.Field: lid}, false); err != nil {
			return fmt.Errorf("link %s: %w", lid, err)
		}
	}
	for _, lid := range have {
		if slices.Contains(want, lid) {
			continue
		}
		if _, _, err := p.do(ctx, s, "unlink", http.MethodDelete, base+"/"+url.PathEscape(lid), nil, false); err != nil {
			return fmt.Errorf("unlink %s: %w", lid, err)
		}
	}
	return nil
}

// target expands a read/update/delete path template ("{path}/{id}" by
// default) into a URL; a template that is a whole URL stands alone.
func (s *httpSpec) target(tmpl, id string) string {
	if tmpl == "" {
		tmpl = "{path}/{id}"
	}
	t := strings.ReplaceAll(tmpl, "{path}", s.Path)
	t = strings.ReplaceAll(t, "{id}", url.PathEscape(id))
	if strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://") {
		return t
	}
	if !strings.HasPrefix(t, "/") {
		t = "/" + t
	}
	return s.URL + t
}

// address is what a State keeps to find the object again: the spec
// without headers, credentials in the URL, body or link ids.
func (s *httpSpec) address() []byte {
	a := *s
	a.Headers, a.Body, a.ID = nil, nil, ""
	if u, err := url.Parse(a.URL); err == nil && u.User != nil {
		u.User = nil
		a.URL = u.String()
	}
	if s.Links != nil {
		a.Links = &httpLinks{Path: s.Links.Path, Field: s.Links.Field}
	}
	raw, _ := json.Marshal(a)
	return raw
}

func (s *httpSpec) expected(op string) []int {
	switch op {
	case "link":
		return []int{200, 201, 204}
	case "unlink":
		return []int{200, 204, 404}
	}
	if codes, ok := s.Expect[op]; ok {
		return codes
	}
	return httpDefaultExpect[op]
}

// do sends one request and decodes the JSON answer. A status outside the
// operation's expected set is an HTTPStatusError (a ConfigError when no
// retry can fix it); with notFoundOK a 404 is returned as a status.
func (p *httpProvider) do(ctx context.Context, s *httpSpec, op, method, target string, body any, notFoundOK bool) (int, any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, configErrorf("body", "not JSON: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, nil, configErrorf("", "%s %s: %v", method, redactURL(target), err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		// Transport errors carry the URL; say it once, without secrets.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, fmt.Errorf("%s %s: %w", method, redactURL(target), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, httpMaxResponse+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: reading the response: %w", method, redactURL(target), err)
	}
	if len(raw) > httpMaxResponse {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: response larger than %d MiB", method, redactURL(target), httpMaxResponse>>20)
	}
	if notFoundOK && resp.StatusCode == http.StatusNotFound {
		return resp.StatusCode, nil, nil
	}
	if !slices.Contains(s.expected(op), resp.StatusCode) {
		return resp.StatusCode, nil, classifyStatus(&HTTPStatusError{
			Method: method, URL: redactURL(target), Status: resp.StatusCode, Body: snippet(raw, httpSnippet),
		})
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return resp.StatusCode, nil, nil
	}
	var decoded any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil {
		if method == http.MethodGet || op == "create" {
			return resp.StatusCode, nil, fmt.Errorf("%s %s: response is not JSON (%v): %s", method, redactURL(target), err, snippet(raw, httpSnippet))
		}
		return resp.StatusCode, nil, nil // a write may answer with anything
	}
	return resp.StatusCode, NormalizeValue(decoded), nil
}

// HTTPStatusError is an answer with a status the spec did not expect. It
// names the method, the URL (credentials removed; headers never) and
// quotes the start of the body.
type HTTPStatusError struct {
	Method string
	URL    string
	Status int
	Body   string
}

func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("%s %s: status %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Retryable reports whether trying again may succeed: server errors,
// 404 (between a read and a write), 409 and 429 may pass; other client
// errors are the request's fault.
func (e *HTTPStatusError) Retryable() bool {
	switch {
	case e.Status >= 500:
		return true
	case e.Status == http.StatusNotFound, e.Status == http.StatusConflict, e.Status == http.StatusTooManyRequests,
		e.Status == http.StatusRequestTimeout:
		return true
	case e.Status >= 400:
		return false
	}
	return true // an unexpected 1xx-3xx: the server may answer right next time
}

func classifyStatus(e *HTTPStatusError) error {
	if e.Retryable() {
		return e
	}
	return &ConfigError{Err: e}
}

// redactURL drops credentials from a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// snippet is the start of a body as one line of valid UTF-8, at most max
// bytes.
func snippet(raw []byte, max int) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(raw), "\uFFFD")), " ")
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// --- JSON helpers ---

// jsonPointer resolves an RFC 6901 pointer in a decoded JSON value.
func jsonPointer(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("JSON pointer %q must start with /", ptr)
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("no field %q", tok)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no index %q in a list of %d", tok, len(x))
			}
			cur = x[i]
		default:
			return nil, fmt.Errorf("cannot step into %s with %q", nested.Describe(cur), tok)
		}
	}
	return cur, nil
}

// httpArrayAt finds the array of a list response: at ptr when given, else
// the whole body when it is an array, else the field named like the last
// path segment ({"labels": [...]} for /labels).
func httpArrayAt(body any, ptr, field string) ([]any, error) {
	if ptr != "" {
		v, err := jsonPointer(body, ptr)
		if err != nil {
			return nil, fmt.Errorf("list at %s: %w", ptr, err)
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("list at %s is %s, not a list", ptr, nested.Describe(v))
		}
		return arr, nil
	}
	if arr, ok := body.([]any); ok {
		return arr, nil
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a list or an object holding %q, got %s", field, nested.Describe(body))
	}
	arr, ok := obj[field].([]any)
	if !ok {
		if _, present := obj[field]; !present {
			return nil, fmt.Errorf("no list at /%s in the response", field)
		}
		return nil, fmt.Errorf("/%s is %s, not a list", field, nested.Describe(obj[field]))
	}
	return arr, nil
}

// idString reads an id that may be a JSON string or number.
func idString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "", errors.New("empty id")
		}
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.Number:
		return x.String(), nil
	case nil:
		return "", errors.New("no id")
	default:
		return "", fmt.Errorf("id is %s, not a string or number", nested.Describe(v))
	}
}

// pickFields keeps, of what the server answered, the parts the spec sets:
// the same keys of objects (recursively) and lists element by element when
// their lengths agree. Extra server fields are left out; fields the
// server lacks are left out too, so they show as changes.
func pickFields(want, got any) any {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := make(map[string]any, len(w))
		for k, wv := range w {
			if gv, ok := g[k]; ok {
				out[k] = pickFields(wv, gv)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			out[i] = pickFields(w[i], g[i])
		}
		return out
	default:
		return got
	}
}

// stateLinkIDs reads the link ids a State recorded, whether fresh or after
// a JSON round trip.
func stateLinkIDs(st State) []string {
	links, _ := st.Attrs["links"].(map[string]any)
	var ids []string
	switch x := links["ids"].(type) {
	case []string:
		ids = slices.Clone(x)
	case []any:
		for _, v := range x {
			if s, ok := v.(string); ok {
				ids = append(ids, s)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func lastSegment(p string) string {
	p = strings.Trim(p, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func intsToAny(codes []int) []any {
	out := make([]any, len(codes))
	for i, c := range codes {
		out[i] = int64(c)
	}
	return out
}
