package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// dashboardAPI is a platform's REST collection of dashboards behind a
// bearer token, each linked to labels (GET /api/dashboards/ID/labels),
// recording the requests that write.
type dashboardAPI struct {
	*httptest.Server
	token string

	mu     sync.Mutex
	objs   map[string]map[string]any
	labels map[string][]string // dashboard id → label ids
	names  map[string]string   // label id → its name, when it has one
	next   int
	writes []string
}

func newDashboardAPI(t *testing.T, token string) *dashboardAPI {
	a := &dashboardAPI{token: token, objs: map[string]map[string]any{}, labels: map[string][]string{}, names: map[string]string{}, next: 40}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *dashboardAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+a.token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id, one := strings.CutPrefix(r.URL.Path, "/api/dashboards/")
	if obj, ok := strings.CutSuffix(id, "/labels"); ok && one && r.Method == http.MethodGet {
		list := []any{}
		for _, l := range a.labels[obj] {
			link := map[string]any{"id": l}
			if n, ok := a.names[l]; ok {
				link["name"] = n
			}
			list = append(list, link)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"labels": list})
		return
	}
	switch {
	case r.URL.Path == "/api/dashboards" && r.Method == http.MethodGet:
		list := []any{}
		for _, o := range a.objs {
			list = append(list, o)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"dashboards": list})
	case r.URL.Path == "/api/dashboards" && r.Method == http.MethodPost:
		var obj map[string]any
		if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.next++
		obj["id"] = fmt.Sprint(a.next)
		a.objs[obj["id"].(string)] = obj
		a.writes = append(a.writes, "POST "+obj["id"].(string))
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(obj)
	case one && r.Method == http.MethodGet:
		obj, ok := a.objs[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(obj)
	case one:
		a.writes = append(a.writes, r.Method+" "+id)
		http.Error(w, "not expected", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

// create makes a dashboard directly, as a person would in the platform.
func (a *dashboardAPI) create(t *testing.T, body string) string {
	req, err := http.NewRequest(http.MethodPost, a.URL+"/api/dashboards", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var obj map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&obj))
	return obj["id"].(string)
}

// label links a dashboard to a label, by hand.
func (a *dashboardAPI) label(id, label string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.labels[id] = append(a.labels[id], label)
}

// nameLabel gives a label a name, as the platform's labels have.
func (a *dashboardAPI) nameLabel(label, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.names[label] = name
}

func (a *dashboardAPI) state() (int, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.objs), append([]string(nil), a.writes...)
}

// exportedDoc is one resource of an exported package.
type exportedDoc struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec map[string]any `json:"spec"`
}

// adoptNoop applies an exported package to a new stack: the plan must
// show no change, and the apply must leave everything unchanged.
func adoptNoop(t *testing.T, h *cairn, name string, pkg []byte, params model.ApplyParams) {
	t.Helper()
	ctx := ctxTimeout(t, 4*time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: name})
	require.NoError(t, err)
	doc := &client.Document{Data: pkg, Format: "yaml"}
	plan, _, err := h.client.DryRun(ctx, st.ID, doc, client.DryRunOptions{Params: params})
	require.NoError(t, err)
	require.NotNil(t, plan)
	assert.Equal(t, model.Summary{Noop: 1}, plan.Summary, "plan of the exported package: %+v", plan.Diff)
	ex, err := h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{Wait: true, Params: params})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Unchanged: 1})
}

// TestE2EExportPlatformObjectsByID exports objects no stack manages, made
// directly on their platform (an http API; an external plugin's store),
// by their platform ids, and applies each package to a new stack: the
// stack adopts the object, so the plan shows no change, the apply changes
// nothing and no second object appears.
func TestE2EExportPlatformObjectsByID(t *testing.T) {
	h := newCairn(t, cairnOptions{sealKey: []byte("export-platform-sealing-key-0123")})
	ctx := ctxTimeout(t, 6*time.Minute)

	t.Run("http", func(t *testing.T) {
		const token = "tok-9f3e21"
		api := newDashboardAPI(t, token)
		other := api.create(t, `{"name": "ops", "panels": 2}`)
		id := api.create(t, `{"name": "sales", "panels": 4, "owner": "ana"}`)
		spec := model.Spec{"url": api.URL, "path": "/api/dashboards", "listPointer": "/dashboards",
			"headers": map[string]any{"Authorization": `Bearer {{ secret "API_TOKEN" }}`}}
		req := model.ExportRequest{Kinds: []string{"http"}, Selector: &model.ExportSelector{
			Spec: spec, IDs: []string{id}, Secrets: map[string]string{"API_TOKEN": token}}}

		raw, err := h.client.Export(ctx, req, "json")
		require.NoError(t, err)
		assert.NotContains(t, string(raw), token, "the secret stays a reference")
		var docs []exportedDoc
		require.NoError(t, json.Unmarshal(raw, &docs))
		require.Len(t, docs, 1, "only the object of the id: %s", raw)
		assert.Equal(t, "sales", docs[0].Metadata.Name)
		assert.Equal(t, id, docs[0].Spec["id"], "the platform id is in the spec")
		assert.Equal(t, map[string]any{"name": "sales", "panels": float64(4), "owner": "ana"}, docs[0].Spec["body"])
		assert.Equal(t, spec["headers"], docs[0].Spec["headers"], "the headers as written")

		t.Run("an id no object has is an error", func(t *testing.T) {
			bad := req
			sel := *req.Selector
			sel.IDs = []string{id, "999"}
			bad.Selector = &sel
			_, err := h.client.Export(ctx, bad, "json")
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Len(t, apiErr.Details, 1, "%+v", apiErr)
			assert.Equal(t, "selector.ids[1]", apiErr.Details[0].Path)
			assert.Contains(t, apiErr.Details[0].Message, `no http object has id "999"`)
		})
		t.Run("a missing secret is named", func(t *testing.T) {
			bad := req
			sel := *req.Selector
			sel.Secrets = nil
			bad.Selector = &sel
			_, err := h.client.Export(ctx, bad, "json")
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr)
			require.NotEmpty(t, apiErr.Details, "%+v", apiErr)
			assert.Equal(t, "selector.secrets.API_TOKEN", apiErr.Details[0].Path)
		})

		yamlPkg, err := h.client.Export(ctx, req, "yaml")
		require.NoError(t, err)
		adoptNoop(t, h, "dashboards", yamlPkg, model.ApplyParams{Secrets: map[string]string{"API_TOKEN": token}})

		t.Run("by label, with the links", func(t *testing.T) {
			api.label(id, "team-sales")
			api.label(id, "prod")
			api.label(other, "prod")
			byLabel := model.ExportRequest{Kinds: []string{"http"}, Selector: &model.ExportSelector{
				Spec: model.Spec{"url": api.URL, "path": "/api/dashboards", "listPointer": "/dashboards", "headers": spec["headers"],
					"links": map[string]any{"path": "/labels", "field": "labelID", "ids": []any{}}},
				Labels: []string{"team-sales"}, Secrets: map[string]string{"API_TOKEN": token}}}
			raw, err := h.client.Export(ctx, byLabel, "json")
			require.NoError(t, err)
			var docs []exportedDoc
			require.NoError(t, json.Unmarshal(raw, &docs))
			require.Len(t, docs, 1, "only the dashboard linked to the label: %s", raw)
			assert.Equal(t, id, docs[0].Spec["id"])
			assert.Equal(t, map[string]any{"path": "/labels", "field": "labelID", "ids": []any{"prod", "team-sales"}}, docs[0].Spec["links"])
			yamlPkg, err := h.client.Export(ctx, byLabel, "yaml")
			require.NoError(t, err)
			adoptNoop(t, h, "dashboards-by-label", yamlPkg, model.ApplyParams{Secrets: map[string]string{"API_TOKEN": token}})

			t.Run("or by the label's name", func(t *testing.T) {
				api.nameLabel("team-sales", "Team Sales")
				byName := byLabel
				sel := *byLabel.Selector
				sel.Labels = []string{"Team Sales"}
				byName.Selector = &sel
				raw, err := h.client.Export(ctx, byName, "json")
				require.NoError(t, err)
				var docs []exportedDoc
				require.NoError(t, json.Unmarshal(raw, &docs))
				require.Len(t, docs, 1, "only the dashboard linked to the label of that name: %s", raw)
				assert.Equal(t, id, docs[0].Spec["id"])
				assert.Equal(t, map[string]any{"path": "/labels", "field": "labelID", "ids": []any{"prod", "team-sales"}}, docs[0].Spec["links"],
					"the links stay by id")
			})
		})
		n, writes := api.state()
		assert.Equal(t, 2, n, "no dashboard added beside %s and %s", other, id)
		assert.Equal(t, []string{"POST " + other, "POST " + id}, writes, "only the two creates made by hand")
	})

	t.Run("external", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "platformplug")
		out, err := exec.Command("go", "build", "-o", bin, "./testdata/platformplug").CombinedOutput()
		require.NoError(t, err, "building the plugin: %s", out)
		dir := t.TempDir()
		// Made directly in the plugin's platform, by hand.
		for _, obj := range []string{`{"id": "a17", "name": "cache", "size": 3}`, `{"id": "b42", "name": "queue", "size": 8, "labels": ["l-7"], "labelNames": ["hot"]}`} {
			var o struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(obj), &o))
			require.NoError(t, os.WriteFile(filepath.Join(dir, o.ID+".json"), []byte(obj), 0o644))
		}
		req := model.ExportRequest{Kinds: []string{"external"}, Selector: &model.ExportSelector{
			Spec: model.Spec{"program": []any{bin}, "config": map[string]any{"dir": dir}}, IDs: []string{"b42"}}}
		raw, err := h.client.Export(ctx, req, "json")
		require.NoError(t, err)
		var docs []exportedDoc
		require.NoError(t, json.Unmarshal(raw, &docs))
		require.Len(t, docs, 1, "only the instance of the id: %s", raw)
		assert.Equal(t, "queue", docs[0].Metadata.Name)
		assert.Equal(t, map[string]any{"dir": dir, "id": "b42", "name": "queue", "size": float64(8)}, docs[0].Spec["config"])

		t.Run("by label", func(t *testing.T) {
			byLabel := req
			sel := *req.Selector
			for _, label := range []string{"l-7", "hot"} {
				sel.IDs, sel.Labels = nil, []string{label}
				byLabel.Selector = &sel
				raw, err := h.client.Export(ctx, byLabel, "json")
				require.NoError(t, err)
				var docs []exportedDoc
				require.NoError(t, json.Unmarshal(raw, &docs))
				require.Len(t, docs, 1, "only the instance with the label %s (by id or name): %s", label, raw)
				assert.Equal(t, "queue", docs[0].Metadata.Name)
			}
		})
		t.Run("a plugin without a list operation cannot list", func(t *testing.T) {
			old := req
			sel := *req.Selector
			sel.Spec = model.Spec{"program": []any{bin, "--no-list"}, "config": map[string]any{"dir": dir}}
			old.Selector = &sel
			_, err := h.client.Export(ctx, old, "json")
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Len(t, apiErr.Details, 1, "%+v", apiErr)
			assert.Contains(t, apiErr.Details[0].Message, "cannot be listed")
		})

		yamlPkg, err := h.client.Export(ctx, req, "yaml")
		require.NoError(t, err)
		adoptNoop(t, h, "queues", yamlPkg, model.ApplyParams{})
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Equal(t, []string{"a17.json", "b42.json"}, names, "no instance added, none written (no writes.log)")
	})
}
