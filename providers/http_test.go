package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/platform"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// httpFixture is a fake platform behind a real HTTP server and a registry
// with the http provider.
type httpFixture struct {
	plat *platform.Platform
	srv  *httptest.Server
	reg  *Registry
	prov *httpProvider
}

func newHTTPFixture(t *testing.T) *httpFixture {
	t.Helper()
	plat := platform.New()
	srv := httptest.NewServer(plat)
	t.Cleanup(srv.Close)
	prov := NewHTTP(srv.Client()).(*httpProvider)
	reg := NewRegistry(kinds.Builtin())
	reg.Register(prov)
	return &httpFixture{plat: plat, srv: srv, reg: reg, prov: prov}
}

// spec builds an http spec for a platform collection.
func (f *httpFixture) spec(coll string, body map[string]any, labelIDs ...string) model.Spec {
	s := model.Spec{"url": f.srv.URL, "path": "/api/v2/" + coll, "body": body}
	if labelIDs != nil {
		ids := make([]any, len(labelIDs))
		for i, id := range labelIDs {
			ids[i] = id
		}
		s["links"] = map[string]any{"path": "/labels", "field": "labelID", "ids": ids}
	}
	return s
}

func (f *httpFixture) converge(t *testing.T, req Request) Change {
	t.Helper()
	req.Kind = "http"
	if req.Name == "" {
		req.Name = "obj"
	}
	ch, err := f.reg.Converge(context.Background(), req)
	require.NoError(t, err, "converge %s: %v", req.Name, err)
	return ch
}

func (f *httpFixture) label(t *testing.T, name string) string {
	t.Helper()
	id, err := f.plat.Create("labels", map[string]any{"name": name})
	require.NoError(t, err)
	return id
}

func TestHTTPLifecycle(t *testing.T) {
	f := newHTTPFixture(t)
	ctx := context.Background()

	// Create.
	want := f.spec("labels", map[string]any{"name": "label_1", "properties": map[string]any{"color": "red"}})
	ch := f.converge(t, Request{Name: "lucid_einstein", Spec: want})
	require.Equal(t, model.ActionCreate, ch.Action, "first apply: %s/%s, want create/created", ch.Action, ch.Outcome)
	require.Equal(t, model.OutcomeCreated, ch.Outcome, "first apply: %s/%s, want create/created", ch.Action, ch.Outcome)
	id := ch.After.ID
	obj, ok := f.plat.Object("labels", id)
	require.True(t, ok, "platform holds %v for id %q", obj, id)
	require.Equal(t, "label_1", obj["name"], "platform holds %v for id %q", obj, id)
	require.Equal(t, id, ch.After.Outputs["id"], "outputs = %v, want the id and the full object", ch.After.Outputs)
	require.Equal(t, platform.OrgID, ch.After.Outputs["body"].(map[string]any)["orgID"], "outputs = %v, want the id and the full object", ch.After.Outputs)

	// Reapply: noop, no writes, although the server added fields.
	f.plat.ResetCounters()
	ch = f.converge(t, Request{Name: "lucid_einstein", Spec: want, ObjectID: id})
	require.Equal(t, model.ActionNoop, ch.Action, "reapply: action %s with %d writes, want noop and none", ch.Action, f.plat.Writes())
	require.Equal(t, 0, f.plat.Writes(), "reapply: action %s with %d writes, want noop and none", ch.Action, f.plat.Writes())

	// Dry-run of a rename: the change is reported, nothing is written.
	renamed := f.spec("labels", map[string]any{"name": "cool label name", "properties": map[string]any{"color": "red"}})
	ch = f.converge(t, Request{Name: "lucid_einstein", Spec: renamed, ObjectID: id, Noop: true})
	require.Equal(t, model.ActionUpdate, ch.Action, "noop rename: %+v", ch)
	require.True(t, ch.Noop, "noop rename: %+v", ch)
	require.Len(t, ch.Changes, 1, "noop rename: %+v", ch)
	require.Equal(t, "body", ch.Changes[0].Path, "noop rename: %+v", ch)
	require.Contains(t, ch.Report, "would change", "noop report %q does not say what would change", ch.Report)
	require.Equal(t, 0, f.plat.Writes(), "noop wrote %d times", f.plat.Writes())

	// Update.
	ch = f.converge(t, Request{Name: "lucid_einstein", Spec: renamed, ObjectID: id})
	require.Equal(t, model.ActionUpdate, ch.Action, "rename: %s, id %s → %s", ch.Action, id, ch.After.ID)
	require.Equal(t, id, ch.After.ID, "rename: %s, id %s → %s", ch.Action, id, ch.After.ID)
	relabelled, _ := f.plat.Object("labels", id)
	require.Equal(t, "cool label name", relabelled["name"], "label after rename = %v", relabelled)
	got := f.plat.Requests("PATCH", "/api/v2/labels/"+id)
	require.Equal(t, 1, got, "%d PATCH requests, want 1", got)

	// Delete (the engine path: the address kept in the state).
	ch = f.converge(t, Request{Name: "lucid_einstein", Spec: renamed, ObjectID: id, Delete: true})
	require.Equal(t, model.ActionDelete, ch.Action, "delete: %s, labels left %v", ch.Action, f.plat.Labels())
	require.Empty(t, f.plat.Labels(), "delete: %s, labels left %v", ch.Action, f.plat.Labels())
	// Deleting again is a noop; reading the recorded id finds nothing.
	ch = f.converge(t, Request{Name: "lucid_einstein", Spec: renamed, ObjectID: id, Delete: true})
	require.Equal(t, model.ActionNoop, ch.Action, "second delete: %s, want noop", ch.Action)
	st, err := f.prov.Read(ctx, Env{ObjectID: id}, renamed)
	require.NoError(t, err, "read of deleted object: %+v, %v", st, err)
	require.False(t, st.Exists, "read of deleted object: %+v, %v", st, err)
}

func TestHTTPAbsentAndAdopted(t *testing.T) {
	f := newHTTPFixture(t)
	ctx := context.Background()
	want := f.spec("buckets", map[string]any{"name": "bucket_1"})
	canon, err := f.prov.Canonicalize(want)
	require.NoError(t, err)
	tests := []struct {
		name     string
		objectID string
		specID   string
		exists   bool
	}{
		{"no id: not created yet", "", "", false},
		{"recorded id gone: 404 means absent", "0a00000000000999", "", false},
		{"recorded id present", "EXISTING", "", true},
		{"spec id adopts an object", "", "EXISTING", true},
	}
	existing, err := f.plat.Create("buckets", map[string]any{"name": "bucket_1", "description": "made by hand"})
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := copyMap(canon)
			if tt.specID != "" {
				spec["id"] = existing
			}
			oid := tt.objectID
			if oid == "EXISTING" {
				oid = existing
			}
			st, err := f.prov.Read(ctx, Env{ObjectID: oid}, spec)
			require.NoError(t, err)
			require.Equal(t, tt.exists, st.Exists, "exists")
			if tt.exists {
				// Only the fields the spec sets are state; the rest are outputs.
				body := st.Attrs["body"].(map[string]any)
				require.Len(t, body, 1, "managed body = %v, want only the spec's fields", body)
				require.Equal(t, "bucket_1", body["name"], "managed body = %v, want only the spec's fields", body)
				require.Equal(t, "made by hand", st.Outputs["body"].(map[string]any)["description"], "outputs lack the server's fields: %v", st.Outputs)
			}
		})
	}
}

func TestHTTPLinks(t *testing.T) {
	f := newHTTPFixture(t)
	l1, l2, l3 := f.label(t, "l1"), f.label(t, "l2"), f.label(t, "l3")
	body := map[string]any{"name": "bucket_1"}
	var id string
	steps := []struct {
		name   string
		ids    []string
		action model.Action
		writes int
	}{
		{"create with two links", []string{l2, l1}, model.ActionCreate, 3},
		{"same set in another order", []string{l1, l2}, model.ActionNoop, 0},
		{"swap one", []string{l1, l3}, model.ActionUpdate, 2},
		{"remove one", []string{l3}, model.ActionUpdate, 1},
		{"remove the last", []string{}, model.ActionUpdate, 1},
		{"none stays none", []string{}, model.ActionNoop, 0},
		{"add back", []string{l2}, model.ActionUpdate, 1},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			f.plat.ResetCounters()
			ch := f.converge(t, Request{Name: "pristine_noir", Spec: f.spec("buckets", body, s.ids...), ObjectID: id})
			require.Equal(t, s.action, ch.Action, "action %s, want %s (changes %+v)", ch.Action, s.action, ch.Changes)
			require.Equal(t, s.writes, f.plat.Writes(), "%d writes, want %d", f.plat.Writes(), s.writes)
			id = ch.After.ID
			want := slices.Clone(s.ids)
			slices.Sort(want)
			got := f.plat.MappingsOf("buckets", id)
			require.True(t, slices.Equal(got, want), "mappings %v, want %v", got, want)
			got = stateLinkIDs(ch.After)
			require.True(t, slices.Equal(got, want), "state links %v, want %v", got, want)
		})
	}
}

// TestHTTPCompensation checks that compensating a change leaves the
// platform as it was before the change.
func TestHTTPCompensation(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares the platform and returns the request to converge.
		setup func(t *testing.T, f *httpFixture) Request
		// byContent compares snapshots without ids (a delete's undo
		// recreates the object with a new id).
		byContent bool
	}{
		{
			name: "create is deleted",
			setup: func(t *testing.T, f *httpFixture) Request {
				l := f.label(t, "l1")
				return Request{Name: "b", Spec: f.spec("buckets", map[string]any{"name": "b1"}, l)}
			},
		},
		{
			name: "update restores body and links",
			setup: func(t *testing.T, f *httpFixture) Request {
				l1, l2 := f.label(t, "l1"), f.label(t, "l2")
				id, _ := f.plat.Create("dashboards", map[string]any{"name": "d1", "description": "old"})
				require.NoError(t, f.plat.Map("dashboards", id, l1))
				return Request{Name: "d", ObjectID: id, Spec: f.spec("dashboards", map[string]any{"name": "d2", "description": "new"}, l2)}
			},
		},
		{
			name: "update with PUT restores body",
			setup: func(t *testing.T, f *httpFixture) Request {
				id, _ := f.plat.Create("tasks", map[string]any{"name": "t1", "flux": "from(bucket: \"a\")"})
				spec := f.spec("tasks", map[string]any{"name": "t1", "flux": "from(bucket: \"b\")"})
				spec["updateMethod"] = "put"
				return Request{Name: "t", ObjectID: id, Spec: spec}
			},
		},
		{
			name: "delete is recreated with its links",
			setup: func(t *testing.T, f *httpFixture) Request {
				l1 := f.label(t, "l1")
				id, _ := f.plat.Create("buckets", map[string]any{"name": "b1", "description": "keep me"})
				require.NoError(t, f.plat.Map("buckets", id, l1))
				return Request{Name: "b", ObjectID: id, Delete: true, Spec: f.spec("buckets", map[string]any{"name": "b1", "description": "keep me"}, l1)}
			},
			byContent: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHTTPFixture(t)
			req := tt.setup(t, f)
			snap := f.plat.Snapshot
			if tt.byContent {
				snap = f.plat.ContentSnapshot
			}
			before := snap()
			ch := f.converge(t, req)
			require.NotEqual(t, model.ActionNoop, ch.Action, "the change changed nothing")
			require.NotEqual(t, snap(), before, "platform unchanged after the change")
			// The change is persisted between apply and compensation.
			raw, err := json.Marshal(ch)
			require.NoError(t, err)
			var stored Change
			require.NoError(t, json.Unmarshal(raw, &stored))
			req.Kind = "http"
			for i := range 2 { // compensation is idempotent
				err := f.reg.Compensate(context.Background(), req, stored)
				require.NoError(t, err, "compensate #%d: %v", i+1, err)
				after := snap()
				require.Equal(t, after, before, "after compensation #%d:\n%s\nwant:\n%s", i+1, after, before)
				if tt.byContent {
					break // a recreate is not idempotent: the object is back with a new id
				}
			}
		})
	}
}

func TestHTTPCompensateReportsNewID(t *testing.T) {
	f := newHTTPFixture(t)
	id, _ := f.plat.Create("labels", map[string]any{"name": "l1"})
	spec, _ := f.prov.Canonicalize(f.spec("labels", map[string]any{"name": "l1"}))
	ch := f.converge(t, Request{Name: "l", ObjectID: id, Spec: spec, Delete: true})
	st, err := f.prov.CompensateState(context.Background(), Env{Name: "l"}, spec, ch)
	require.NoError(t, err)
	require.True(t, st.Exists, "recreated state %+v: want a new id different from %s", st, id)
	require.NotEmpty(t, st.ID, "recreated state %+v: want a new id different from %s", st, id)
	require.NotEqual(t, id, st.ID, "recreated state %+v: want a new id different from %s", st, id)
	_, ok := f.plat.Object("labels", st.ID)
	require.True(t, ok, "no label with the reported id %s", st.ID)
}

func TestHTTPIdempotentApply(t *testing.T) {
	f := newHTTPFixture(t)
	l := f.label(t, "l")
	spec := f.spec("buckets", map[string]any{"name": "b", "retentionRules": []any{map[string]any{"type": "expire", "everySeconds": 3600}}}, l)
	ch := f.converge(t, Request{Name: "b", Spec: spec})
	once := f.plat.Snapshot()
	// The same apply again (an activity retried after it succeeded).
	f.plat.ResetCounters()
	again := f.converge(t, Request{Name: "b", Spec: spec, ObjectID: ch.After.ID})
	require.Equal(t, model.ActionNoop, again.Action, "second apply: %s with %d writes; platform changed: %v", again.Action, f.plat.Writes(), !bytes.Equal(once, f.plat.Snapshot()))
	require.Equal(t, 0, f.plat.Writes(), "second apply: %s with %d writes; platform changed: %v", again.Action, f.plat.Writes(), !bytes.Equal(once, f.plat.Snapshot()))
	require.Equal(t, f.plat.Snapshot(), once, "second apply: %s with %d writes; platform changed: %v", again.Action, f.plat.Writes(), !bytes.Equal(once, f.plat.Snapshot()))
	// Apply called directly on a stale "have" (the read was before the
	// first attempt's update) converges to the same platform.
	have := ch.Before
	have.ID, have.Exists = ch.After.ID, true
	have.Attrs = map[string]any{"body": map[string]any{}, "links": map[string]any{"ids": []any{l}}}
	canon, _ := f.prov.Canonicalize(spec)
	_, err := f.prov.Apply(context.Background(), Env{}, canon, have)
	require.NoError(t, err)
	require.Equal(t, f.plat.Snapshot(), once, "apply on a stale read changed the platform")
}

func TestHTTPCreateFailureLeavesNothing(t *testing.T) {
	f := newHTTPFixture(t)
	before := f.plat.Snapshot()
	// The link to a label that does not exist fails after the create.
	_, err := f.reg.Converge(context.Background(), Request{Kind: "http", Name: "b", Spec: f.spec("buckets", map[string]any{"name": "b"}, "0a00000000000777")})
	require.Error(t, err, "linking a missing label succeeded")
	require.Contains(t, err.Error(), "link 0a00000000000777", "error %q does not name the link", err)
	require.Equal(t, f.plat.Snapshot(), before, "a failed create left")
}

func TestHTTPStatusErrors(t *testing.T) {
	const token = "tok-very-secret"
	tests := []struct {
		name      string
		setup     func(f *httpFixture)
		headers   map[string]any
		wantInMsg []string
		config    bool // not retryable
	}{
		{
			name:      "server error is retryable",
			setup:     func(f *httpFixture) { f.plat.FailNext("POST", "/api/v2/labels", 1) },
			wantInMsg: []string{"POST", "/api/v2/labels", "status 500", "injected fault"},
		},
		{
			name:      "rejected name is a config error",
			setup:     func(f *httpFixture) { _ = f.plat.RejectNames("^bad") },
			wantInMsg: []string{"status 422", `name \"bad label\" is not allowed`},
			config:    true,
		},
		{
			name:      "conflict is retryable",
			setup:     func(f *httpFixture) { _, _ = f.plat.Create("labels", map[string]any{"name": "bad label"}) },
			wantInMsg: []string{"status 409", "already exists"},
		},
		{
			name:      "rate limit is retryable",
			setup:     func(f *httpFixture) { f.plat.Inject(platform.Fault{Path: "/api/v2/labels", Status: 429, Times: 1}) },
			wantInMsg: []string{"status 429"},
		},
		{
			name:      "wrong token is a config error and the token is not shown",
			setup:     func(f *httpFixture) { f.plat.SetToken("other") },
			headers:   map[string]any{"Authorization": "Bearer " + token},
			wantInMsg: []string{"status 401"},
			config:    true,
		},
		{
			name: "long bodies are cut",
			setup: func(f *httpFixture) {
				f.plat.Inject(platform.Fault{Path: "/api/v2/labels", Status: 400, Body: strings.Repeat("x", 5000)})
			},
			wantInMsg: []string{"status 400", "xxx…"},
			config:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHTTPFixture(t)
			tt.setup(f)
			spec := f.spec("labels", map[string]any{"name": "bad label"})
			if tt.headers != nil {
				spec["headers"] = tt.headers
			}
			_, err := f.reg.Converge(context.Background(), Request{Kind: "http", Name: "l", Spec: spec})
			require.Error(t, err, "no error")
			for _, w := range tt.wantInMsg {
				assert.Contains(t, err.Error(), w, "error %q lacks %q", err, w)
			}
			assert.NotContains(t, err.Error(), token, "error %q shows the token", err)
			assert.LessOrEqual(t, len(err.Error()), 1500, "error is %d bytes long", len(err.Error()))
			var se *HTTPStatusError
			require.ErrorAs(t, err, &se, "error %v is not an HTTPStatusError", err)
			got := IsConfigError(err)
			require.Equal(t, tt.config, got, "config error = %v, want %v (%v)", got, tt.config, err)
		})
	}
}

func TestHTTPTransportAndResponseErrors(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"1","pad":"`))
		_, _ = w.Write(bytes.Repeat([]byte("a"), httpMaxResponse))
		_, _ = w.Write([]byte(`"}`))
	}))
	defer big.Close()
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>maintenance</html>"))
	}))
	defer notJSON.Close()
	noID := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"data":{"name":"x"}}`))
	}))
	defer noID.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name   string
		url    string
		want   string
		config bool
	}{
		{"oversized response", big.URL, "larger than 10 MiB", false},
		{"not JSON", notJSON.URL, "not JSON", false},
		{"no id in the create response", noID.URL, "no id at /id", true},
		{"connection refused is retryable", closedURL, "connect", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewHTTP(nil).(*httpProvider)
			spec, err := p.Canonicalize(model.Spec{"url": tt.url, "path": "/things", "body": map[string]any{"name": "x"}})
			require.NoError(t, err)
			_, err = p.Apply(context.Background(), Env{}, spec, State{})
			require.Error(t, err, "error %v, want one containing %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "error %v, want one containing %q", err, tt.want)
			require.Equal(t, tt.config, IsConfigError(err), "config")
		})
	}
}

// TestHTTPOtherAPIShapes drives an API unlike the platform: ids as numbers
// under /data, PUT updates on a custom path, a list under /result/items.
func TestHTTPOtherAPIShapes(t *testing.T) {
	objects := map[string]map[string]any{}
	next := 41
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/widgets", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		next++
		body["serial"] = "S-1"
		objects[fmt.Sprint(next)] = body
		w.WriteHeader(202)
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"key": next}})
	})
	mux.HandleFunc("GET /v1/widgets/{id}/detail", func(w http.ResponseWriter, r *http.Request) {
		obj, ok := objects[r.PathValue("id")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(obj)
	})
	mux.HandleFunc("PUT /v1/widgets/{id}", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		objects[r.PathValue("id")] = body
		w.WriteHeader(204)
	})
	mux.HandleFunc("GET /v1/all-widgets", func(w http.ResponseWriter, r *http.Request) {
		var items []any
		for id, o := range objects {
			item := copyMap(o)
			item["id"], _ = json.Number(id).Int64()
			items = append(items, item)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"items": items}})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	p := NewHTTP(srv.Client()).(*httpProvider)
	reg := NewRegistry(kinds.Builtin())
	reg.Register(p)
	spec := model.Spec{
		"url": srv.URL + "/", "path": "v1/widgets", "readPath": "{path}/{id}/detail", "updateMethod": "PUT",
		"idPointer": "/data/key", "expect": map[string]any{"create": []any{202}},
		"listPath": "/v1/all-widgets", "listPointer": "/result/items",
		"body": map[string]any{"name": "w", "size": 3},
	}
	ch, err := reg.Converge(context.Background(), Request{Kind: "http", Name: "w", Spec: spec})
	require.NoError(t, err)
	require.Equal(t, "42", ch.After.ID, "create: %s id %q, want create id 42", ch.Action, ch.After.ID)
	require.Equal(t, model.ActionCreate, ch.Action, "create: %s id %q, want create id 42", ch.Action, ch.After.ID)
	spec["body"] = map[string]any{"name": "w", "size": 4}
	ch, err = reg.Converge(context.Background(), Request{Kind: "http", Name: "w", Spec: spec, ObjectID: "42"})
	require.NoError(t, err)
	require.Equal(t, model.ActionUpdate, ch.Action, "update: %s, object %v", ch.Action, objects["42"])
	require.Equal(t, 4.0, objects["42"]["size"], "update: %s, object %v", ch.Action, objects["42"])
	listed, err := p.ListObjects(context.Background(), Env{}, spec, []string{"name", "size"})
	require.NoError(t, err)
	require.Len(t, listed, 1, "listed")
	require.Equal(t, "w", listed[0].Name, "listed %+v", listed)
	require.Equal(t, "42", listed[0].Spec["id"], "listed %+v", listed)
	got := listed[0].Spec["body"]
	require.True(t, EqualValues(got, map[string]any{"name": "w", "size": 4}), "listed body %v", got)
}

func TestHTTPList(t *testing.T) {
	f := newHTTPFixture(t)
	for _, n := range []string{"b2", "b1"} {
		_, err := f.plat.Create("buckets", map[string]any{"name": n, "description": "d-" + n})
		require.NoError(t, err)
	}
	tests := []struct {
		name      string
		body      map[string]any // the fields to export, by key
		names     []string
		wantNames []string
		want      map[string]any // body of b1
	}{
		{"fields the spec's body names", map[string]any{"name": "", "description": ""}, nil, []string{"b1", "b2"}, map[string]any{"name": "b1", "description": "d-b1"}},
		{"all fields but id", nil, nil, []string{"b1", "b2"}, map[string]any{"name": "b1", "description": "d-b1", "orgID": platform.OrgID, "retentionRules": []any{}, "type": "user"}},
		{"only named objects", map[string]any{"name": ""}, []string{"b1", "b9"}, []string{"b1"}, map[string]any{"name": "b1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := f.spec("buckets", tt.body)
			spec["headers"] = map[string]any{"Authorization": "Bearer secret"}
			listed, err := f.reg.List(context.Background(), "http", Node{}, ListQuery{Spec: spec, Names: tt.names})
			require.NoError(t, err)
			var names []string
			for _, l := range listed {
				names = append(names, l.Name)
			}
			require.True(t, slices.Equal(names, tt.wantNames), "listed %v, want %v", names, tt.wantNames)
			b1 := listed[0]
			require.True(t, EqualValues(b1.Spec["body"], tt.want), "b1 body = %v, want %v", b1.Spec["body"], tt.want)
			_, has := b1.Spec["headers"]
			require.False(t, has, "a listed spec carries the headers")
			// The listed spec reproduces the object: converging it is a noop.
			ch := f.converge(t, Request{Name: b1.Name, Spec: b1.Spec})
			require.Equal(t, model.ActionNoop, ch.Action, "converging a listed spec: %s %+v", ch.Action, ch.Changes)
		})
	}
	_, err := f.reg.List(context.Background(), "http", Node{}, ListQuery{})
	require.Error(t, err, "listing without a spec")
	require.True(t, IsConfigError(err), "listing without a spec: %v", err)
}

func TestHTTPCanonicalize(t *testing.T) {
	p := NewHTTP(nil)
	tests := []struct {
		name    string
		spec    model.Spec
		check   func(t *testing.T, got model.Spec)
		wantErr string
	}{
		{
			name: "normal form",
			spec: model.Spec{
				"url": "HTTP://Example.COM/base/", "path": "api/v2/labels/", "updateMethod": "put",
				"expect": map[string]any{"update": []any{204, 200, 200}},
				"links":  map[string]any{"path": "labels", "field": "labelID", "ids": []any{"b", "a", "b"}},
				"body":   map[string]any{"n": 1},
			},
			check: func(t *testing.T, got model.Spec) {
				require.Equal(t, "http://example.com/base", got["url"], "got %v", got)
				require.Equal(t, "/api/v2/labels", got["path"], "got %v", got)
				require.Equal(t, "PUT", got["updateMethod"], "got %v", got)
				require.True(t, EqualValues(got["expect"], map[string]any{"update": []any{200, 204}}), "expect %v", got["expect"])
				require.True(t, EqualValues(got["links"], map[string]any{"path": "/labels", "field": "labelID", "ids": []any{"a", "b"}}), "links %v", got["links"])
			},
		},
		{name: "missing url", spec: model.Spec{"path": "/x"}, wantErr: "url: required"},
		{name: "relative url", spec: model.Spec{"url": "example.com", "path": "/x"}, wantErr: "absolute http(s) URL"},
		{name: "missing path", spec: model.Spec{"url": "http://x"}, wantErr: "path: required"},
		{name: "bad method", spec: model.Spec{"url": "http://x", "path": "/x", "updateMethod": "POST"}, wantErr: "want PUT or PATCH"},
		{name: "bad pointer", spec: model.Spec{"url": "http://x", "path": "/x", "idPointer": "id"}, wantErr: "must start with /"},
		{name: "unknown field", spec: model.Spec{"url": "http://x", "path": "/x", "bdy": map[string]any{}}, wantErr: `did you mean "body"`},
		{name: "wrong type", spec: model.Spec{"url": "http://x", "path": "/x", "body": "text"}, wantErr: "body"},
		{name: "bad status", spec: model.Spec{"url": "http://x", "path": "/x", "expect": map[string]any{"read": []any{999}}}, wantErr: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Canonicalize(tt.spec)
			if tt.wantErr != "" {
				require.Error(t, err, "error %v, want a config error containing %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "error %v, want a config error containing %q", err, tt.wantErr)
				require.True(t, IsConfigError(err), "error %v, want a config error containing %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, got)
			again, err := p.Canonicalize(got)
			require.NoError(t, err, "canonical form is not stable: %v → %v (%v)", got, again, err)
			require.True(t, EqualValues(again, got), "canonical form is not stable: %v → %v (%v)", got, again, err)
		})
	}
}

func TestJSONPointerAndPick(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"b/c": []any{"x", map[string]any{"~k": 5}}}}
	for _, tt := range []struct {
		ptr  string
		want any
		err  bool
	}{
		{"", doc, false},
		{"/a/b~1c/0", "x", false},
		{"/a/b~1c/1/~0k", 5, false},
		{"/a/missing", nil, true},
		{"/a/b~1c/9", nil, true},
		{"/a/b~1c/0/deeper", nil, true},
	} {
		got, err := jsonPointer(doc, tt.ptr)
		require.Equal(t, tt.err, err != nil, "pointer %q = %v, %v", tt.ptr, got, err)
		if !tt.err {
			assert.True(t, EqualValues(got, tt.want), "pointer %q = %v, %v", tt.ptr, got, err)
		}
	}
	want := map[string]any{"name": "x", "rules": []any{map[string]any{"every": 1}}, "gone": true}
	got := map[string]any{"name": "x", "id": "1", "rules": []any{map[string]any{"every": 1, "type": "expire"}}}
	picked := pickFields(want, got)
	assert.True(t, EqualValues(picked, map[string]any{"name": "x", "rules": []any{map[string]any{"every": 1}}}), "picked %v", picked)
}

func BenchmarkHTTPConvergeNoop(b *testing.B) {
	plat := platform.New()
	srv := httptest.NewServer(plat)
	defer srv.Close()
	reg := NewRegistry(nil)
	reg.Register(NewHTTP(srv.Client()))
	l, _ := plat.Create("labels", map[string]any{"name": "l"})
	spec := model.Spec{"url": srv.URL, "path": "/api/v2/buckets", "body": map[string]any{"name": "b"},
		"links": map[string]any{"path": "/labels", "field": "labelID", "ids": []any{l}}}
	ch, err := reg.Converge(context.Background(), Request{Kind: "http", Name: "b", Spec: spec})
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		_, err := reg.Converge(context.Background(), Request{Kind: "http", Name: "b", Spec: spec, ObjectID: ch.After.ID})
		require.NoError(b, err)
	}
}

func BenchmarkHTTPCreateDelete(b *testing.B) {
	plat := platform.New()
	srv := httptest.NewServer(plat)
	defer srv.Close()
	reg := NewRegistry(nil)
	reg.Register(NewHTTP(srv.Client()))
	spec := model.Spec{"url": srv.URL, "path": "/api/v2/dashboards", "body": map[string]any{"name": "d"}}
	for b.Loop() {
		ch, err := reg.Converge(context.Background(), Request{Kind: "http", Name: "d", Spec: spec})
		require.NoError(b, err)
		_, err = reg.Converge(context.Background(), Request{Kind: "http", Name: "d", Spec: spec, ObjectID: ch.After.ID, Delete: true})
		require.NoError(b, err)
	}
}

func TestHTTPTokenStaysOutOfStates(t *testing.T) {
	const token = "s3cret-token-value"
	f := newHTTPFixture(t)
	f.plat.SetToken(token)
	l := f.label(t, "l")
	spec := f.spec("buckets", map[string]any{"name": "b"}, l)
	spec["headers"] = map[string]any{"Authorization": "Bearer " + token}
	var changes []Change
	ch := f.converge(t, Request{Name: "b", Spec: spec})
	changes = append(changes, ch)
	id := ch.After.ID
	spec["body"] = map[string]any{"name": "b2"}
	changes = append(changes, f.converge(t, Request{Name: "b", Spec: spec, ObjectID: id}))
	ch = f.converge(t, Request{Name: "b", Spec: spec, ObjectID: id, Delete: true})
	changes = append(changes, ch)
	require.Equal(t, model.ActionDelete, ch.Action, "delete with a token: %s, buckets %v", ch.Action, f.plat.Buckets())
	require.Empty(t, f.plat.Buckets(), "delete with a token: %s, buckets %v", ch.Action, f.plat.Buckets())
	for _, ch := range changes {
		raw, err := json.Marshal(ch)
		require.NoError(t, err)
		require.False(t, bytes.Contains(raw, []byte(token)), "a persisted change holds the headers: %s", raw)
		require.False(t, bytes.Contains(raw, []byte("Authorization")), "a persisted change holds the headers: %s", raw)
	}
	// Compensating the delete recreates the bucket, authenticated.
	require.NoError(t, f.reg.Compensate(context.Background(), Request{Kind: "http", Name: "b", Spec: spec, ObjectID: id, Delete: true}, ch))
	b, ok := f.plat.Find("buckets", "b2")
	require.True(t, ok, "bucket not recreated with its label: %v", f.plat.Buckets())
	require.Len(t, f.plat.MappingsOf("buckets", b["id"].(string)), 1, "bucket not recreated with its label: %v", f.plat.Buckets())
}

func TestHTTPDeleteNeedsSpec(t *testing.T) {
	f := newHTTPFixture(t)
	_, err := f.reg.Converge(context.Background(), Request{Kind: "http", Name: "gone", ObjectID: "0a00000000000001", Delete: true})
	require.Error(t, err, "delete without spec")
	require.True(t, IsConfigError(err), "delete without spec: %v", err)
	require.Contains(t, err.Error(), "without its spec", "delete without spec: %v", err)
}

// TestHTTPPkgerStackLifecycle walks pkger's S1 stack steps 1-6 through the
// engine against the fake platform: each step's actions and the platform
// afterwards.
func TestHTTPPkgerStackLifecycle(t *testing.T) {
	f := newHTTPFixture(t)
	ids := map[string]string{} // resource name → platform id, as a stack records them
	type res struct {
		name, coll, objName string
		assoc               bool // linked to the label
		remove              bool
	}
	label := func(objName string) res { return res{name: "lucid_einstein", coll: "labels", objName: objName} }
	bucket := res{name: "pristine_noir", coll: "buckets", objName: "bucket_1", assoc: true}
	dash := res{name: "charmed_saratoba", coll: "dashboards", objName: "dash_1", assoc: true}
	task := res{name: "alcord_mumphries", coll: "tasks", objName: "task_1", assoc: true}
	plain := func(r res) res { r.assoc = false; return r }
	removed := func(r res) res { r.remove = true; return r }

	steps := []struct {
		name    string
		pkg     []res // in dependency order (labels first)
		actions map[string]model.Action
		check   func(t *testing.T)
	}{
		{"1 apply new package", []res{label("label_1"), bucket, dash},
			map[string]model.Action{"lucid_einstein": "create", "pristine_noir": "create", "charmed_saratoba": "create"},
			func(t *testing.T) {
				for _, r := range []res{bucket, dash} {
					got := f.plat.MappingsOf(r.coll, ids[r.name])
					require.True(t, slices.Equal(got, []string{ids["lucid_einstein"]}), "%s mappings %v", r.name, got)
				}
			}},
		{"2 reapply unchanged", []res{label("label_1"), bucket, dash},
			map[string]model.Action{"lucid_einstein": "noop", "pristine_noir": "noop", "charmed_saratoba": "noop"}, nil},
		{"3 rename the label", []res{label("cool label name"), bucket, dash},
			map[string]model.Action{"lucid_einstein": "update", "pristine_noir": "noop", "charmed_saratoba": "noop"},
			func(t *testing.T) {
				l, _ := f.plat.Object("labels", ids["lucid_einstein"])
				require.Equal(t, "cool label name", l["name"], "label %v", l)
			}},
		{"4 add a task", []res{label("cool label name"), bucket, dash, task},
			map[string]model.Action{"lucid_einstein": "noop", "pristine_noir": "noop", "charmed_saratoba": "noop", "alcord_mumphries": "create"},
			func(t *testing.T) {
				got := f.plat.MappingsOf("tasks", ids["alcord_mumphries"])
				require.Len(t, got, 1, "task mappings")
			}},
		{"5 remove the task", []res{label("cool label name"), bucket, dash, removed(task)},
			map[string]model.Action{"lucid_einstein": "noop", "pristine_noir": "noop", "charmed_saratoba": "noop", "alcord_mumphries": "delete"},
			func(t *testing.T) {
				require.Empty(t, f.plat.Tasks(), "tasks left")
			}},
		{"6 remove the label and its associations", []res{plain(bucket), plain(dash), removed(label("cool label name"))},
			map[string]model.Action{"pristine_noir": "update", "charmed_saratoba": "update", "lucid_einstein": "delete"},
			func(t *testing.T) {
				require.Empty(t, f.plat.Labels(), "left behind:\n%s", f.plat.Snapshot())
				require.Empty(t, f.plat.MappingsOf("buckets", ids["pristine_noir"]), "left behind:\n%s", f.plat.Snapshot())
				require.Empty(t, f.plat.MappingsOf("dashboards", ids["charmed_saratoba"]), "left behind:\n%s", f.plat.Snapshot())
			}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			f.plat.ResetCounters()
			for _, r := range s.pkg {
				var links []string
				if r.assoc {
					links = []string{ids["lucid_einstein"]}
				} else if r.coll != "labels" {
					links = []string{} // the kind manages associations: none
				}
				spec := f.spec(r.coll, map[string]any{"name": r.objName}, links...)
				ch := f.converge(t, Request{Name: r.name, Spec: spec, ObjectID: ids[r.name], Delete: r.remove})
				require.Equal(t, s.actions[r.name], ch.Action, "%s: %s, want %s (%s)", r.name, ch.Action, s.actions[r.name], ch.Report)
				if r.remove {
					delete(ids, r.name)
				} else {
					ids[r.name] = ch.After.ID
				}
			}
			if s.check != nil {
				s.check(t)
			}
			if s.name == "2 reapply unchanged" {
				require.Equal(t, 0, f.plat.Writes(), "reapply wrote %d times", f.plat.Writes())
			}
		})
	}
}

func TestHTTPURLCredentialsStayOutOfStatesAndErrors(t *testing.T) {
	f := newHTTPFixture(t)
	withUser := strings.Replace(f.srv.URL, "http://", "http://admin:pa55word@", 1)
	spec := model.Spec{"url": withUser, "path": "/api/v2/labels", "body": map[string]any{"name": "l"}}
	ch := f.converge(t, Request{Name: "l", Spec: spec})
	raw, _ := json.Marshal(ch)
	require.False(t, bytes.Contains(raw, []byte("pa55word")), "a persisted change holds the URL's password: %s", raw)
	f.plat.FailNext("", "/api/v2/labels/"+ch.After.ID, 1)
	_, err := f.reg.Converge(context.Background(), Request{Kind: "http", Name: "l", Spec: spec, ObjectID: ch.After.ID})
	require.Error(t, err, "error %v: want a 500 without the password", err)
	require.NotContains(t, err.Error(), "pa55word", "error %v: want a 500 without the password", err)
	require.Contains(t, err.Error(), "status 500", "error %v: want a 500 without the password", err)
}
