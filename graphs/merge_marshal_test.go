package graphs

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

const releaseLayerYAML = `
apiVersion: cairn/v1
kind: Graph
metadata: {name: Upgrade, type: upgrade}
tasks:
  - id: deploy_start
    type: stage
  - id: maintenance-on
    type: shell
    roles: ['*']
    requires: [deploy_start]
    parameters: {cmd: touch /run/maint, timeout: 30}
  - id: stop-api
    type: shell
    roles: [controller]
    requires: [maintenance-on]
    strategy: {type: one_by_one}
    fail_on_error: true
    condition: 'true'
    reexecute_on: [deploy_changes]
    parameters:
      cmd: systemctl stop api
      env: {A: "1", B: "2"}
      timeout: 60
  - id: migrate
    type: external
    roles: [primary-controller]
    requires: [stop-api]
    cross_depends:
      - {name: stop-api, role: controller}
    parameters:
      program: [migrate, --all]
      config: {ratio: 0.5, whole: 60.0, count: 3, flags: [a, b], deep: {x: 1, y: "two"}, text: "line 1\nline 2\n"}
`

const clusterLayerYAML = `
- id: stop-api
  condition: null
  strategy: {type: parallel, amount: 2}
  parameters:
    env: {A: null, C: "3"}
    timeout: 90
- id: extra-check
  type: shell
  roles: [compute]
  required_for: [migrate]
  parameters: {cmd: "check --url 'http://x/?a=1&b=<2>'"}
`

const pluginLayerYAML = `
{"type": "upgrade", "tasks": [
  {"id": "maintenance-on", "type": "skipped"},
  {"id": "plugin-hook", "type": "shell", "roles": ["/contr/"], "cross_depended_by": [{"name": "migrate", "policy": "any"}],
   "parameters": {"cmd": "hook", "timeout": 1.5}, "custom_field": {"k": [1, 2.25, null, true]}}
]}
`

// clearParseOrigin clears what parsing and merging record besides the
// document's content.
func clearParseOrigin(g *model.Graph) *model.Graph {
	for _, t := range g.Tasks {
		t.Pos, t.Layer, t.Owner = model.Position{}, "", ""
	}
	return g
}

func parseLayer(t *testing.T, name, src string) *model.Graph {
	t.Helper()
	g, err := ParseGraph(Options{Partial: true}, Source{Name: name, Data: []byte(src)})
	require.NoError(t, err, "%s: %v", name, err)
	return g
}

func TestMarshalGraphRoundTrip(t *testing.T) {
	merged, err := Merge("upgrade",
		LayerGraph{Layer: model.LayerRelease, Owner: "r", Graph: parseLayer(t, "release.yaml", releaseLayerYAML)},
		LayerGraph{Layer: model.LayerCluster, Owner: "c", Graph: parseLayer(t, "cluster.yaml", clusterLayerYAML)},
		LayerGraph{Layer: model.LayerPlugin, Owner: "p", Graph: parseLayer(t, "plugin.json", pluginLayerYAML)},
	)
	require.NoError(t, err)
	// The merge did what the layers say.
	byID := map[string]*model.Task{}
	for _, tk := range merged.Tasks {
		byID[tk.ID] = tk
	}
	stop := byID["stop-api"]
	require.Empty(t, stop.Condition, "stop-api merged wrongly: %+v", *stop)
	require.Equal(t, 2, stop.Strategy.Limit(), "stop-api merged wrongly: %+v", *stop)
	require.Equal(t, map[string]any{"B": "2", "C": "3"}, stop.Parameters["env"], "stop-api merged wrongly: %+v", *stop)
	require.Equal(t, map[string]any{"reexecute_on": []any{"deploy_changes"}}, stop.Extra, "stop-api merged wrongly: %+v", *stop)
	require.Equal(t, "skipped", byID["maintenance-on"].Type, "maintenance-on: %+v", *byID["maintenance-on"])
	require.Equal(t, []string{"deploy_start"}, byID["maintenance-on"].Requires, "maintenance-on: %+v", *byID["maintenance-on"])
	errs := ValidateGraph(nil, merged)
	require.LessOrEqual(t, len(errs), 0, "merged graph invalid: %v", errs)

	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out, err := MarshalGraph(merged, format)
			require.NoError(t, err)
			back, err := ParseGraph(Options{}, Source{Name: "merged." + format, Data: out})
			require.NoError(t, err, "%v\n%s", err, out)
			want := clearParseOrigin(cloneGraphForTest(merged))
			got := clearParseOrigin(back)
			require.Equal(t, want, got, "round trip differs:\n got %s\nwant %s\n%s", dumpMergedTasks(got.Tasks), dumpMergedTasks(want.Tasks), out)
			again, err := MarshalGraph(back, format)
			require.NoError(t, err, "second rendering differs (%v):\n%s\n---\n%s", err, again, out)
			require.Equal(t, string(out), string(again), "second rendering differs (%v):\n%s\n---\n%s", err, again, out)
		})
	}
}

func cloneGraphForTest(g *model.Graph) *model.Graph {
	out := &model.Graph{Name: g.Name, Type: g.Type}
	for _, t := range g.Tasks {
		c := &model.Task{ID: t.ID}
		if err := mergeTask(c, t); err != nil {
			panic(err)
		}
		c.Extra = mergeClone(t.Extra).(map[string]any)
		if t.Extra == nil {
			c.Extra = nil
		}
		out.Tasks = append(out.Tasks, c)
	}
	return out
}

func TestMarshalGraphKeepsLayerNulls(t *testing.T) {
	layer := parseLayer(t, "cluster.yaml", clusterLayerYAML)
	for _, format := range []string{"yaml", "json"} {
		out, err := MarshalGraph(layer, format)
		require.NoError(t, err)
		back := parseLayer(t, "again."+format, string(out))
		got, want := clearParseOrigin(back), clearParseOrigin(parseLayer(t, "cluster.yaml", clusterLayerYAML))
		require.Equal(t, want, got, "%s: layer round trip differs:\n got %s\nwant %s\n%s", format, dumpMergedTasks(got.Tasks), dumpMergedTasks(want.Tasks), out)
		if !strings.Contains(string(out), "condition: null") {
			require.Contains(t, string(out), `"condition": null`, "%s: explicit null lost:\n%s", format, out)
		}
	}
}

func TestMarshalGraphShape(t *testing.T) {
	g := &model.Graph{Type: "default", Tasks: []*model.Task{{
		ID: "a", Type: "shell", Roles: []string{"*"}, RequiredFor: []string{},
		Parameters: map[string]any{"cmd": "echo <&>", "n": int64(5), "f": 5.0, "s": "5"},
		Extra:      map[string]any{"zeta": true, "alpha": "x"},
		Layer:      model.LayerCluster, Owner: "secret-owner", Pos: model.Position{Source: "internal.yaml", Line: 9},
	}}}
	tests := []struct {
		format string
		want   string
	}{
		{"yaml", `apiVersion: cairn/v1
kind: Graph
metadata:
  type: default
tasks:
  - id: a
    type: shell
    roles: ["*"]
    required_for: []
    parameters:
      cmd: echo <&>
      f: 5.0
      "n": 5
      s: "5"
    alpha: x
    zeta: true
`},
		{"json", `{
  "apiVersion": "cairn/v1",
  "kind": "Graph",
  "metadata": {
    "type": "default"
  },
  "tasks": [
    {
      "id": "a",
      "type": "shell",
      "roles": [
        "*"
      ],
      "required_for": [],
      "parameters": {
        "cmd": "echo <&>",
        "f": 5.0,
        "n": 5,
        "s": "5"
      },
      "alpha": "x",
      "zeta": true
    }
  ]
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			out, err := MarshalGraph(g, tt.format)
			require.NoError(t, err)
			require.Equal(t, tt.want, string(out), "got:\n%s\nwant:\n%s", out, tt.want)
		})
	}
}

func TestMarshalGraphErrors(t *testing.T) {
	tests := []struct {
		name   string
		g      *model.Graph
		format string
		want   string
	}{
		{"no graph", nil, "yaml", "no graph"},
		{"unknown format", &model.Graph{}, "toml", `unknown format "toml"`},
		{"nil task", &model.Graph{Tasks: []*model.Task{nil}}, "json", "task 0 is nil"},
		{"unsupported value", &model.Graph{Tasks: []*model.Task{{ID: "a", Type: "shell", Parameters: map[string]any{"ch": make(chan int)}}}}, "yaml", `task "a": parameters: ch: unsupported value of type chan int`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MarshalGraph(tt.g, tt.format)
			require.Error(t, err, "err = %v, want %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "err = %v, want %q", err, tt.want)
		})
	}
}

func TestMarshalGraphYAMLValues(t *testing.T) {
	g := &model.Graph{Type: "t", Tasks: []*model.Task{{
		ID: "a", Type: "external",
		Parameters: map[string]any{
			"script":   "set -e\necho one\n\techo tabbed\n\necho done\n",
			"noeol":    "line 1\nline 2",
			"indented": "  leading\nspace\n",
			"twoeols":  "x\n\n",
			"words":    []any{"yes", "No", "null", "~", "", " pad", "a: b", "a #b", "#c", "-x", "1.5", "0x1F", ".inf", "ok", "with,comma", "[x]"},
			"objects":  []any{map[string]any{"k": "v", "n": map[string]any{}}, []any{int64(1), []any{}}, map[string]any{}},
			"nested":   map[string]any{"list": []any{map[string]any{"deep": []any{"a\nb"}}}},
			"special":  "tab\there \x01 \u2028 \ufeff é",
			"colon:":   "key ends in colon",
		},
	}}}
	out, err := MarshalGraph(g, "yaml")
	require.NoError(t, err)
	for _, want := range []string{"script: |\n        set -e\n        echo one\n        \techo tabbed\n\n        echo done\n", "noeol: |-\n        line 1\n        line 2\n"} {
		assert.Contains(t, string(out), want, "output lacks %q:\n%s", want, out)
	}
	var doc struct {
		Tasks []struct {
			Parameters map[string]any
		}
	}
	err = yaml.Unmarshal(out, &doc)
	require.NoError(t, err, "%v\n%s", err, out)
	want := map[string]any{}
	for k, v := range g.Tasks[0].Parameters {
		want[k] = yamlNormal(v)
	}
	got := doc.Tasks[0].Parameters
	require.Equal(t, want, got, "read back:\n got %#v\nwant %#v\n%s", got, want, out)
}

// yamlNormal is v as yaml.v3 decodes it into interface values.
func yamlNormal(v any) any {
	switch x := v.(type) {
	case int64:
		return int(x)
	case map[string]any:
		out := map[string]any{}
		for k, item := range x {
			out[k] = yamlNormal(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = yamlNormal(item)
		}
		return out
	}
	return v
}

// FuzzMarshalYAML: any valid UTF-8 string, as a key or a value, in block
// or flow position, reads back unchanged from YAML and from JSON.
func FuzzMarshalYAML(f *testing.F) {
	for _, s := range []string{"", "yes", "a: b", "x\ny", " x", "\n", "- a", "#", "é\u2028", "a\n\n", "\t", "null", "1e3", "a\r\nb"} {
		f.Add(s, "k")
	}
	f.Fuzz(func(t *testing.T, s, key string) {
		if !utf8.ValidString(s) || !utf8.ValidString(key) {
			return // documents are UTF-8; the parser never yields such strings
		}
		params := map[string]any{
			key:    s,
			"list": []any{s, "x"},
			"deep": []any{map[string]any{key: []any{s}}, []any{s}},
		}
		g := &model.Graph{Type: "t", Tasks: []*model.Task{{ID: "a", Type: "external", Parameters: params}}}
		out, err := MarshalGraph(g, "yaml")
		require.NoError(t, err)
		var doc struct {
			Tasks []struct {
				Parameters map[string]any
			}
		}
		err = yaml.Unmarshal(out, &doc)
		require.NoError(t, err, "%v\n%s", err, out)
		require.Len(t, doc.Tasks, 1, "read back %#v, want %#v\n%s", doc.Tasks, params, out)
		require.Equal(t, params, doc.Tasks[0].Parameters, "read back %#v, want %#v\n%s", doc.Tasks, params, out)
		out, err = MarshalGraph(g, "json")
		require.NoError(t, err)
		doc.Tasks = nil
		err = json.Unmarshal(out, &doc)
		require.NoError(t, err, "%v\n%s", err, out)
		require.Len(t, doc.Tasks, 1, "JSON read back %#v, want %#v\n%s", doc.Tasks, params, out)
		require.Equal(t, params, doc.Tasks[0].Parameters, "JSON read back %#v, want %#v\n%s", doc.Tasks, params, out)
	})
}
