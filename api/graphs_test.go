package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

const releaseTasksYAML = `# Fuel tasks.yaml: a bare list of tasks
- id: maintenance-on
  type: shell
  roles: ['*']
  parameters: {cmd: echo on}
- id: stop-api
  type: shell
  roles: [controller]
  requires: [maintenance-on]
  parameters: {cmd: echo stop, timeout: 60}
`

const clusterGraphJSON = `{"type": "default", "name": "cluster tweaks", "tasks": [
  {"id": "stop-api", "parameters": {"cmd": "echo cluster-stop"}}
]}`

const pluginOneJsonnet = `local task(id, cmd) = {id: id, type: 'shell', roles: ['controller'], requires: ['stop-api'], parameters: {cmd: cmd}};
{apiVersion: 'cairn/v1', kind: 'Graph', metadata: {name: 'plugin one', type: 'default'}, tasks: [task('plugin-task', 'echo plugin')]}`

const pluginTwoYAML = `apiVersion: cairn/v1
kind: Graph
metadata: {name: plugin two}
tasks:
  - id: maintenance-on
    roles: [controller]
`

// fleet creates release r1, plugins p1 and p2 and cluster c1 (plugins in
// order p2, p1) with two nodes.
func fleet(t *testing.T, s *testServer) {
	t.Helper()
	s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r1", "name": "r1"}).expect(t, http.StatusCreated)
	s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p1", "name": "p1"}).expect(t, http.StatusCreated)
	s.do(http.MethodPost, "/v1/plugins", map[string]any{"id": "p2", "name": "p2"}).expect(t, http.StatusCreated)
	s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "c1", "name": "c1", "releaseId": "r1", "pluginIds": []string{"p2", "p1"},
		"nodes": []map[string]any{{"id": "n1", "roles": []string{"controller"}}, {"id": "n2", "roles": []string{"compute"}}}}).expect(t, http.StatusCreated)
}

func TestGraphsUploadDownloadMerge(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t))
		fleet(t, s)

		// Upload each layer in its own encoding.
		var info model.GraphInfo
		r := s.do(http.MethodPut, "/v1/releases/r1/graphs/default", releaseTasksYAML, "Content-Type", "application/yaml").expect(t, http.StatusCreated)
		r.json(t, &info)
		require.Equal(t, 2, info.Tasks, "info %+v", info)
		require.Equal(t, model.LayerRelease, info.Layer, "info %+v", info)
		require.Equal(t, "default", info.Type, "info %+v", info)
		require.Equal(t, "/v1/releases/r1/graphs/default", r.Header.Get("Location"), "info %+v", info)
		s.do(http.MethodPut, "/v1/clusters/c1/graphs/default", clusterGraphJSON, "Content-Type", "application/json").expect(t, http.StatusCreated)
		s.do(http.MethodPut, "/v1/plugins/p1/graphs/default", pluginOneJsonnet, "Content-Type", "application/jsonnet").expect(t, http.StatusCreated)
		s.do(http.MethodPut, "/v1/plugins/p2/graphs/default", pluginTwoYAML, "Content-Type", "application/x-yaml").expect(t, http.StatusCreated)

		// Download verbatim, with the content type it came in.
		for path, want := range map[string][2]string{
			"/v1/releases/r1/graphs/default": {releaseTasksYAML, "application/yaml"},
			"/v1/clusters/c1/graphs/default": {clusterGraphJSON, "application/json"},
			"/v1/plugins/p1/graphs/default":  {pluginOneJsonnet, "application/jsonnet"},
		} {
			r := s.do(http.MethodGet, path, nil).expect(t, http.StatusOK)
			require.Equal(t, want[0], string(r.Body), "%s: %q (%s), want verbatim %s", path, r.Body, r.Header.Get("Content-Type"), want[1])
			require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), want[1]), "%s: %q (%s), want verbatim %s", path, r.Body, r.Header.Get("Content-Type"), want[1])
		}
		// Re-encoded on request: the Jsonnet plugin graph as JSON and YAML.
		r = s.do(http.MethodGet, "/v1/plugins/p1/graphs/default", nil, "Accept", "application/json").expect(t, http.StatusOK)
		var asJSON struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Tasks []map[string]any `json:"tasks"`
		}
		r.json(t, &asJSON)
		require.Equal(t, "Graph", asJSON.Kind, "re-encoded %s", r.Body)
		require.Equal(t, "plugin one", asJSON.Metadata.Name, "re-encoded %s", r.Body)
		require.Len(t, asJSON.Tasks, 1, "re-encoded %s", r.Body)
		require.Equal(t, "plugin-task", asJSON.Tasks[0]["id"], "re-encoded %s", r.Body)
		r = s.do(http.MethodGet, "/v1/releases/r1/graphs/default", nil, "Accept", "application/json").expect(t, http.StatusOK)
		require.True(t, json.Valid(r.Body), "release graph as JSON: %s", r.Body)
		require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"), "release graph as JSON: %s", r.Body)
		s.do(http.MethodGet, "/v1/releases/r1/graphs/default", nil, "Accept", "image/png").expect(t, http.StatusNotAcceptable)

		// List.
		var list struct {
			Graphs []model.GraphInfo `json:"graphs"`
		}
		s.do(http.MethodGet, "/v1/plugins/p1/graphs", nil).expect(t, http.StatusOK).json(t, &list)
		require.Len(t, list.Graphs, 1, "list %+v", list)
		require.Equal(t, "application/jsonnet", list.Graphs[0].ContentType, "list %+v", list)
		require.Equal(t, 1, list.Graphs[0].Tasks, "list %+v", list)

		// Merged: release → cluster → plugins in the cluster's order (p2, p1).
		r = s.do(http.MethodGet, "/v1/clusters/c1/graphs/default/merged", nil).expect(t, http.StatusOK)
		require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/yaml"), "merged content type %q", r.Header.Get("Content-Type"))
		merged, err := graphs.ParseGraph(graphs.Options{}, graphs.Source{Name: "merged", Data: r.Body, Format: graphs.FormatYAML})
		require.NoError(t, err, "merged graph does not parse: %v\n%s", err, r.Body)
		byID := map[string]*model.Task{}
		var order []string
		for _, task := range merged.Tasks {
			byID[task.ID] = task
			order = append(order, task.ID)
		}
		require.Equal(t, "maintenance-on,stop-api,plugin-task", strings.Join(order, ","), "order %v", order)
		require.Equal(t, "echo cluster-stop", byID["stop-api"].Parameters["cmd"], "cluster override lost: %+v", byID["stop-api"])
		require.Equal(t, "shell", byID["stop-api"].Type, "cluster override lost: %+v", byID["stop-api"])
		require.Equal(t, "controller", strings.Join(byID["maintenance-on"].Roles, ","), "plugin override lost: %+v", byID["maintenance-on"])
		for _, q := range []struct{ accept, query string }{{"application/json", ""}, {"", "?format=json"}} {
			r = s.do(http.MethodGet, "/v1/clusters/c1/graphs/default/merged"+q.query, nil, "Accept", q.accept).expect(t, http.StatusOK)
			require.True(t, json.Valid(r.Body), "merged JSON (%+v): %s", q, r.Body)
		}

		// Replace: a new upload replaces the owner's graph whole (200).
		s.do(http.MethodPut, "/v1/clusters/c1/graphs/default", `[{"id": "extra", "type": "shell", "parameters": {"cmd": "true"}}]`, "Content-Type", "application/json").expect(t, http.StatusOK)
		r = s.do(http.MethodGet, "/v1/clusters/c1/graphs/default/merged", nil, "Accept", "application/json").expect(t, http.StatusOK)
		require.NotContains(t, string(r.Body), "cluster-stop", "replace did not replace: %s", r.Body)
		require.Contains(t, string(r.Body), `"extra"`, "replace did not replace: %s", r.Body)

		// Two plugins defining the same task: 422, naming both.
		s.do(http.MethodPut, "/v1/plugins/p2/graphs/default", `[{"id": "plugin-task", "type": "shell", "parameters": {"cmd": "x"}}]`, "Content-Type", "application/json").expect(t, http.StatusOK)
		info2 := s.do(http.MethodGet, "/v1/clusters/c1/graphs/default/merged", nil).expect(t, http.StatusUnprocessableEntity).errorBody(t)
		all := ""
		for _, d := range info2.Details {
			all += d.Message + "\n"
		}
		require.Contains(t, all, "p1", "conflict does not name both plugins: %+v", info2)
		require.Contains(t, all, "p2", "conflict does not name both plugins: %+v", info2)

		// Delete.
		s.do(http.MethodDelete, "/v1/plugins/p2/graphs/default", nil).expect(t, http.StatusNoContent)
		s.do(http.MethodDelete, "/v1/plugins/p2/graphs/default", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodGet, "/v1/plugins/p2/graphs/default", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodGet, "/v1/clusters/c1/graphs/upgrade/merged", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodGet, "/v1/clusters/nope/graphs/default/merged", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodGet, "/v1/releases/nope/graphs", nil).expect(t, http.StatusNotFound)
		s.do(http.MethodPut, "/v1/releases/nope/graphs/default", releaseTasksYAML, "Content-Type", "application/yaml").expect(t, http.StatusNotFound)
	})
}

func TestGraphUploadBadInput(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	fleet(t, s)
	s.do(http.MethodPut, "/v1/releases/r1/graphs/default", releaseTasksYAML, "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	tests := []badDocument{
		{"malformed YAML", "application/yaml", "- id: a\n  type: [shell\n", 2, "yaml"},
		{"malformed JSON", "application/json", "[{\"id\": \"a\",}]", 1, "json"},
		{"Jsonnet import refused", "application/jsonnet", "import 'tasks.libsonnet'\n", 1, "import"},
		{"duplicate task", "application/yaml", "- id: a\n  type: shell\n  parameters: {cmd: x}\n- id: a\n  type: shell\n  parameters: {cmd: y}\n", 4, "a"},
		{"unknown task type", "application/yaml", "- id: a\n  type: shel\n  parameters: {cmd: x}\n", 2, "shell"},
		{"cycle", "application/yaml", "- id: a\n  type: shell\n  requires: [b]\n  parameters: {cmd: x}\n- id: b\n  type: shell\n  requires: [a]\n  parameters: {cmd: y}\n", 0, "cycle"},
		{"parameter schema", "application/yaml", "- id: a\n  type: shell\n  parameters: {cmd: x, retries: many}\n", 3, "retries"},
		{"type differs from URL", "application/yaml", "apiVersion: cairn/v1\nkind: Graph\nmetadata: {type: upgrade}\ntasks: []\n", 0, "type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := s.do(http.MethodPut, "/v1/releases/r1/graphs/default", tt.body, "Content-Type", tt.ctype).expect(t, http.StatusUnprocessableEntity).errorBody(t)
			checkDetails(t, info, tt)
		})
	}
	// The stored graph is untouched and no new type appeared.
	r := s.do(http.MethodGet, "/v1/releases/r1/graphs/default", nil).expect(t, http.StatusOK)
	require.Equal(t, releaseTasksYAML, string(r.Body), "stored graph changed: %s", r.Body)
	list, err := s.Store.ListGraphs(context.Background(), model.LayerRelease, "r1")
	require.NoError(t, err, "graphs %v %v", list, err)
	require.Len(t, list, 1, "graphs %v %v", list, err)
	s.do(http.MethodPut, "/v1/releases/r1/graphs/bad%20type", releaseTasksYAML, "Content-Type", "application/yaml").expect(t, http.StatusBadRequest)
	s.do(http.MethodPut, "/v1/releases/r1/graphs/default", releaseTasksYAML, "Content-Type", "text/plain").expect(t, http.StatusUnsupportedMediaType)
}

func TestMergedGraphYAMLIsAGraphDocument(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	fleet(t, s)
	s.do(http.MethodPut, "/v1/releases/r1/graphs/upgrade", releaseTasksYAML, "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	r := s.do(http.MethodGet, "/v1/clusters/c1/graphs/upgrade/merged", nil).expect(t, http.StatusOK)
	var doc struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Type string `yaml:"type"`
		} `yaml:"metadata"`
	}
	err := yaml.Unmarshal(r.Body, &doc)
	require.NoError(t, err, "merged: %v %+v\n%s", err, doc, r.Body)
	require.Equal(t, "Graph", doc.Kind, "merged: %v %+v\n%s", err, doc, r.Body)
	require.Equal(t, "upgrade", doc.Metadata.Type, "merged: %v %+v\n%s", err, doc, r.Body)
}
