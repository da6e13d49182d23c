package graphs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// parseErrLines renders the Errors of a Parse one per line, or fails the
// test when err is something else.
func parseErrLines(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var es Errors
	require.ErrorAs(t, err, &es, "error is %T, want Errors: %v", err, err)
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Error()
	}
	return out
}

func sameLines(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	assert.Equal(t, want, got, "errors:\n  got:\n    %s\n  want:\n    %s", strings.Join(got, "\n    "), strings.Join(want, "\n    "))
}

func TestParseRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"valid file", `
kind: File
metadata: {name: motd}
spec: {path: /etc/motd, content: "hello {{ env \"SITE\" }}"}
`, nil},
		{"missing kind", `
metadata: {name: a}
spec: {path: /a}
`, []string{`t.yaml:2:1: kind: missing kind`}},
		{"unknown kind with suggestion", `
kind: Fiel
metadata: {name: a}
`, []string{`t.yaml:2:7: kind: unknown kind "Fiel"; did you mean "file"?`}},
		{"missing metadata", `
kind: file
spec: {path: /a, content: x}
`, []string{`t.yaml:2:1: metadata.name: missing metadata.name`}},
		{"metadata without name", `
kind: file
metadata: {}
spec: {path: /a, content: x}
`, []string{`t.yaml:3:11: metadata.name: missing metadata.name`}},
		{"unknown field with suggestion (the pkger seed's typo)", `
kind: file
metadta:
  name: a
spec: {path: /a, content: x}
`, []string{
			`t.yaml:2:1: metadata.name: missing metadata.name`,
			`t.yaml:3:1: metadta: unknown field "metadta"; did you mean "metadata"?`,
		}},
		{"unknown field without suggestion", `
kind: file
metadata: {name: a, labels: x}
spec: {path: /a, content: x}
zzz: 1
`, []string{
			`t.yaml:3:21: metadata.labels: unknown field "labels"`,
			`t.yaml:5:1: zzz: unknown field "zzz"`,
		}},
		{"duplicate kind and name, kinds compared case-insensitively", `
kind: File
metadata: {name: a}
spec: {path: /a, content: x}
---
kind: file
metadata: {name: a}
spec: {path: /b, content: y}
`, []string{`t.yaml:7:18: metadata.name: duplicate resource file/a: first defined at t.yaml:2:1`}},
		{"same name under different kinds is fine", `
kind: file
metadata: {name: a}
spec: {path: /a/x, content: x}
---
kind: directory
metadata: {name: a}
spec: {path: /a}
`, nil},
		{"dependsOn a missing resource, both reference forms", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
dependsOn: [directory/etc, {kind: Directory, name: var}]
`, []string{
			`t.yaml:5:13: dependsOn[0]: depends on directory/etc: no such resource in the package`,
			`t.yaml:5:28: dependsOn[1]: depends on directory/var: no such resource in the package`,
		}},
		{"dangling reference suggests a near name", `
kind: directory
metadata: {name: etc}
spec: {path: /etc}
---
kind: file
metadata: {name: a}
spec: {path: /etc/a, content: x}
dependsOn: [Directory/ect]
`, []string{`t.yaml:9:13: dependsOn[0]: depends on directory/ect: no such resource in the package; did you mean "directory/etc"?`}},
		{"malformed references", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
dependsOn: [File, {kind: file}, 3]
`, []string{
			`t.yaml:5:13: dependsOn[0]: invalid reference "File": want "Kind/name"`,
			`t.yaml:5:19: dependsOn[1]: a reference needs both kind and name`,
			`t.yaml:5:33: dependsOn[2]: expected a string, got a number`,
		}},
		{"pkger association to a missing label", `
kind: file
metadata: {name: a}
spec:
  path: /a
  content: x
  association:
    - kind: Label
      name: lucid
`, []string{`t.yaml:8:7: spec.association[0]: associated with Label/lucid: no such resource in the package`}},
		{"top-level associations", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
associations: [{kind: Label, name: l}]
`, []string{`t.yaml:5:16: associations[0]: associated with Label/l: no such resource in the package`}},
		{"dependency cycle names every member in order", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
dependsOn: [file/b]
---
kind: file
metadata: {name: b}
spec: {path: /b, content: x}
dependsOn: [file/c]
---
kind: file
metadata: {name: c}
spec: {path: /c, content: x}
dependsOn: [File/a]
`, []string{`t.yaml:2:1: dependsOn: dependency cycle: file/a -> file/b -> file/c -> file/a`}},
		{"a resource depending on itself", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
dependsOn: [file/a]
`, []string{`t.yaml:2:1: dependsOn: dependency cycle: file/a -> file/a`}},
		{"spec against the kind's schema", `
kind: file
metadata: {name: a}
spec:
  path: /a
  content: x
  mode: true
  contnet: y
`, []string{
			`t.yaml:7:9: spec.mode: expected string or integer, got boolean`,
			`t.yaml:8:3: spec.contnet: unknown field "contnet"; did you mean "content"?`,
		}},
		{"missing required spec field points at spec", `
kind: exec
metadata: {name: a}
spec:
  timeout: 5
`, []string{`t.yaml:4:1: spec: one of "command", "argv" is required`}},
		{"template syntax error in a spec string", `
kind: file
metadata: {name: a}
spec: {path: /a, content: "{{ env "}
`, []string{`t.yaml:4:27: spec.content: invalid expression: line 1: unclosed action`}},
		{"template syntax error in the spec of an unknown kind", `
kind: Widget
metadata: {name: a}
spec: {label: "{{ nosuchfunc }}"}
`, []string{
			`t.yaml:2:7: kind: unknown kind "Widget"`,
			`t.yaml:4:15: spec.label: invalid expression: line 1: function "nosuchfunc" not defined`,
		}},
		{"meta and target", `
kind: exec
metadata: {name: a}
spec: {command: "true"}
meta: {retry: -2, delay: soon, timeout: 90, noop: maybe, retries: 1}
target: {rolez: [web], nodes: node-1}
`, []string{
			`t.yaml:5:15: meta.retry: retry must be -1 (forever), 0 or more, got -2`,
			`t.yaml:5:26: meta.delay: invalid duration "soon": want a duration such as "30s" or a number of seconds`,
			`t.yaml:5:51: meta.noop: expected true or false, got a string`,
			`t.yaml:5:58: meta.retries: unknown field "retries"`,
			`t.yaml:6:10: target.rolez: unknown field "rolez"; did you mean "roles"?`,
		}},
		{"apiVersion", `
apiVersion: influxdata.com/v2alpha1
kind: directory
metadata: {name: a}
spec: {path: /a}
`, []string{`t.yaml:2:13: apiVersion: unsupported apiVersion "influxdata.com/v2alpha1" (want "cairn/v1")`}},
		{"malformed YAML", `
kind: directory
metadata: {name: a
spec: {path: /a}
`, []string{`t.yaml:3: invalid YAML: did not find expected ',' or '}'`}},
		{"a scalar document", `
just text
`, []string{`t.yaml:2:1: expected a document (an object) or a list of tasks, got a string`}},
		{"values JSON cannot hold", `
kind: stage
metadata: {name: a}
spec: {path: /a, x: .inf, 7: seven, [1]: list}
`, []string{
			`t.yaml:4:21: spec.x: .inf is not a finite number (JSON cannot hold it)`,
			`t.yaml:4:37: spec: keys must be strings, not a list`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Options{}, Source{Name: "t.yaml", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.want)
		})
	}
}

func TestParseTaskRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"valid graph with every field", `
- id: maintenance-on
  type: shell
  version: 2.1.0
  role: ['*']
  parameters: {cmd: touch /tmp/maintenance, timeout: 60}
- id: stop-api
  type: shell
  roles: [controller, /^compute-\d+$/, master]
  requires: [maintenance-on]
  required_for: [migrate-db]
  cross-depends: [{name: maintenance-on, role: master, policy: any}]
  cross_depended_by: [{name: /migrate/, role: [controller]}]
  condition: 'eq .node.name "node-1"'
  fail_on_error: false
  strategy: {type: parallel, amount: 2}
  parameters: {cmd: systemctl stop api, undo: systemctl start api}
- id: migrate-db
  type: exec
  roles: [controller]
  strategy: {type: one_by_one}
  parameters: {command: migrate}
- id: controller
  type: group
  tasks: [stop-api]
  fault_tolerance: 30%
- id: done
  type: stage
  groups: [controller]
`, nil},
		{"duplicate task id", `
- id: a
  type: shell
  parameters: {cmd: x}
- id: a
  type: shell
  parameters: {cmd: y}
`, []string{`g.yaml:5:7: [1].id: duplicate task id "a": first defined at g.yaml:2:3`}},
		{"missing id and type", `
- type: shell
  parameters: {cmd: x}
- id: b
- id: ""
  type: stage
`, []string{
			`g.yaml:2:3: [0].id: missing task id`,
			`g.yaml:4:3: [1].type: missing task type`,
			`g.yaml:5:7: [2].id: missing task id`,
		}},
		{"unknown task type with suggestion", `
- id: a
  type: shel
`, []string{`g.yaml:3:9: [0].type: unknown task type "shel"; did you mean "shell"?`}},
		{"references to missing tasks", `
- id: a
  type: stage
  requires: [b, ghost]
  required_for: [nope]
- id: b
  type: group
  tasks: [a, lost]
  groups: [nogroup]
`, []string{
			`g.yaml:8:14: [1].tasks[1]: group member "lost": no such task in graph "default"`,
		}},
		{"cycle through requires and required_for", `
- id: a
  type: stage
  requires: [b]
  required_for: [c]
- id: b
  type: stage
  requires: [c]
- id: c
  type: stage
`, []string{`g.yaml:2:3: [0].requires: dependency cycle: a -> b -> c -> a`}},
		{"field types", `
- id: a
  type: stage
  roles: [1, web]
  requires: b
  fail_on_error: "no"
  condition: [x]
  parameters: [1]
  strategy: {type: serial, amount: 0, max: 3}
  fault_tolerance: many
`, []string{
			`g.yaml:4:11: [0].roles[0]: expected a string, got a number`,
			`g.yaml:6:18: [0].fail_on_error: expected true or false, got a string`,
			`g.yaml:7:14: [0].condition: expected a string, got a list`,
			`g.yaml:8:15: [0].parameters: expected an object, got a list`,
			`g.yaml:9:20: [0].strategy.type: strategy type must be "parallel" or "one_by_one", got "serial"`,
			`g.yaml:9:36: [0].strategy.amount: amount must be a positive number, got 0`,
			`g.yaml:9:39: [0].strategy.max: unknown field "max"`,
			`g.yaml:10:20: [0].fault_tolerance: fault_tolerance must be a whole number or a percentage such as "30%", got "many"`,
		}},
		{"one_by_one takes no amount; typo suggested", `
- id: a
  type: stage
  strategy: {type: one_by_on, amount: 2}
- id: b
  type: stage
  strategy: {type: one_by_one, amount: 2}
`, []string{
			`g.yaml:4:20: [0].strategy.type: strategy type must be "parallel" or "one_by_one", got "one_by_on"; did you mean "one_by_one"?`,
			`g.yaml:7:40: [1].strategy.amount: amount applies to the parallel strategy only (one_by_one runs one at a time)`,
		}},
		{"cross dependencies", `
- id: a
  type: stage
  cross_depends: [{name: b, policy: some}, {role: web}, {name: "/(/", role: [1]}, x]
- id: b
  type: stage
  cross-depends: []
  cross_depends: []
`, []string{
			`g.yaml:4:37: [0].cross_depends[0].policy: policy must be "all" or "any", got "some"`,
			`g.yaml:4:44: [0].cross_depends[1].name: missing name`,
			`g.yaml:4:64: [0].cross_depends[2].name: invalid pattern "/(/": missing closing ): ` + "`(`",
			`g.yaml:4:78: [0].cross_depends[2].role[0]: expected a string, got a number`,
			`g.yaml:4:83: [0].cross_depends[3]: expected {name, role, policy}, got a string`,
			`g.yaml:8:3: [1].cross_depends: cross-depends and cross_depends are the same field; give one`,
		}},
		{"role and roles together; bad role pattern", `
- id: a
  type: stage
  role: [web]
  roles: ['/[/']
`, []string{`g.yaml:5:3: [0].roles: role and roles are the same field; give one`}},
		{"bad role pattern", `
- id: a
  type: stage
  roles: [web, '/[/']
`, []string{"g.yaml:4:16: [0].roles[1]: invalid pattern \"/[/\": missing closing ]: `[`"}},
		{"parameters against the task type's schema", `
- id: a
  type: shell
  parameters:
    cmd: echo hi
    bogus: 1
    timeout: [1]
- id: b
  type: upload_file
  parameters: {data: hello}
`, []string{
			`g.yaml:6:5: [0].parameters.bogus: unknown field "bogus"`,
			`g.yaml:7:5: [0].parameters.timeout: expected number or string, got array`,
			`g.yaml:10:3: [1].parameters.path: missing required field "path"`,
		}},
		{"condition that does not parse", `
- id: a
  type: stage
  condition: nosuchfunc .node
`, []string{`g.yaml:4:14: [0].condition: invalid expression: condition: line 1: function "nosuchfunc" not defined`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Options{}, Source{Name: "g.yaml", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.want)
		})
	}
}

func TestParseGraphDocument(t *testing.T) {
	src := `apiVersion: cairn/v1
kind: Graph
metadata: {name: Upgrade database, type: upgrade, typo: 1}
tasks:
  - id: stop-api
    type: exec
    roles: [controller]
    requires: [maintenance-on]
    parameters: {command: systemctl stop api}
`
	g, err := ParseGraph(Options{}, Source{Name: "up.yaml", Data: []byte(src)})
	sameLines(t, parseErrLines(t, err), []string{
		`up.yaml:3:51: metadata.typo: unknown field "typo"; did you mean "type"?`,
	})
	require.Equal(t, "upgrade", g.Type, "graph = %+v", g)
	require.Equal(t, "Upgrade database", g.Name, "graph = %+v", g)
	require.Len(t, g.Tasks, 1, "graph = %+v", g)
	require.Equal(t, "stop-api", g.Tasks[0].ID, "graph = %+v", g)
	got := g.Tasks[0].Pos
	assert.Equal(t, model.Position{Source: "up.yaml", Line: 5, Column: 5}, got, "task position")
}

func TestParseGraphShapes(t *testing.T) {
	tests := []struct {
		name, src        string
		format           Format
		wantType, wantNm string
		wantIDs          []string
	}{
		{"bare task list (Fuel tasks.yaml)", "- id: a\n  type: stage\n- id: b\n  type: stage\n  requires: [a]\n", FormatYAML, "default", "", []string{"a", "b"}},
		{"kind Graph without type", "kind: Graph\nmetadata: {name: n}\ntasks: [{id: a, type: stage}]\n", FormatYAML, "default", "n", []string{"a"}},
		{"Fuel graph object", `{"type": "usecase1", "name": "Use case", "tasks": [{"id": "a", "type": "stage"}]}`, FormatJSON, "usecase1", "Use case", []string{"a"}},
		{"empty source", "", FormatYAML, "default", "", nil},
		{"empty JSON list", "[]", FormatJSON, "default", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGraph(Options{}, Source{Name: "g", Data: []byte(tt.src), Format: tt.format})
			require.NoError(t, err)
			var ids []string
			for _, task := range g.Tasks {
				ids = append(ids, task.ID)
			}
			require.Equal(t, tt.wantType, g.Type, "graph = type %q name %q ids %v", g.Type, g.Name, ids)
			require.Equal(t, tt.wantNm, g.Name, "graph = type %q name %q ids %v", g.Type, g.Name, ids)
			require.Equal(t, tt.wantIDs, ids, "graph = type %q name %q ids %v", g.Type, g.Name, ids)
		})
	}
}

func TestParseGraphRefusesOtherDocuments(t *testing.T) {
	src := `kind: directory
metadata: {name: a}
spec: {path: /a}
---
kind: Graph
metadata: {type: one}
---
kind: Graph
metadata: {type: two}
`
	_, err := ParseGraph(Options{}, Source{Name: "x.yaml", Data: []byte(src)})
	sameLines(t, parseErrLines(t, err), []string{
		`x.yaml: expected one graph, found 2 (types one, two)`,
		`x.yaml:1:1: expected a graph, found a directory resource`,
	})
}

func TestParseFuelTaskDetails(t *testing.T) {
	src := `- id: upload
  type: upload_file
  version: 2.0
  roles: '*'
  requires: [a]
  cross-depends: [{name: a, role: master}]
  cross-depended-by: [{name: /^b/, role: [web, db], policy: any}]
  test_pre: {cmd: ruby pre.rb}
  reexecute_on: [deploy_changes]
  condition: null
  fail_on_error: ~
  custom_flag:
  parameters:
    path: /etc/motd
    data: hello
    owner: null
- id: a
  type: stage
`
	docs, err := Parse(Options{Partial: true}, Source{Name: "tasks.yaml", Data: []byte(src)})
	// Partial: parameters are not checked against the schema, so the
	// null that removes an inherited parameter is kept, not refused.
	require.NoError(t, err)
	require.Len(t, docs.Graphs, 1, "graphs")
	task := docs.Graphs[0].Tasks[0]
	want := &model.Task{
		ID: "upload", Type: "upload_file", Version: "2.0", Roles: []string{"*"}, Requires: []string{"a"},
		CrossDepends:    []model.CrossDep{{Name: "a", Role: "master"}},
		CrossDependedBy: []model.CrossDep{{Name: "/^b/", Role: []string{"web", "db"}, Policy: "any"}},
		Parameters:      map[string]any{"path": "/etc/motd", "data": "hello", "owner": nil},
		Extra: map[string]any{
			"test_pre":     map[string]any{"cmd": "ruby pre.rb"},
			"reexecute_on": []any{"deploy_changes"},
		},
		Nulls: []string{"condition", "fail_on_error", "custom_flag"},
		Pos:   model.Position{Source: "tasks.yaml", Line: 1, Column: 3},
	}
	assert.Equal(t, want, task, "task")
}

func TestParseMultipleSources(t *testing.T) {
	a := `kind: directory
metadata: {name: etc}
spec: {path: /etc}
`
	b := `[
  {"kind": "file", "metadata": {"name": "motd"}, "spec": {"path": "/etc/motd", "content": "x"}, "dependsOn": ["directory/etc"]},
  {"kind": "Directory", "metadata": {"name": "etc"}, "spec": {"path": "/srv"}}
]`
	c := "- id: t1\n  type: stage\n"
	d := `{"type": "default", "tasks": [{"id": "t2", "type": "stage", "requires": ["t1"]}, {"id": "t1", "type": "stage"}]}`
	docs, err := Parse(Options{}, Source{Name: "a.yaml", Data: []byte(a)}, Source{Name: "b.json", Data: []byte(b)},
		Source{Name: "c.yaml", Data: []byte(c)}, Source{Name: "d.json", Data: []byte(d)})
	sameLines(t, parseErrLines(t, err), []string{
		`b.json:3:46: metadata.name: duplicate resource directory/etc: first defined at a.yaml:1:1`,
		`d.json:1:89: tasks[1].id: duplicate task id "t1": first defined at c.yaml:1:3`,
	})
	got := docs.Package.Sources
	assert.Equal(t, []string{"a.yaml", "b.json", "c.yaml", "d.json"}, got, "sources")
	require.Len(t, docs.Package.Resources, 3, "resources")
	require.Equal(t, model.Position{Source: "b.json", Doc: 0, Line: 2, Column: 3}, docs.Package.Resources[1].Pos, "resources = %+v", docs.Package.Resources)
	assert.Equal(t, 1, docs.Package.Resources[2].Pos.Doc, "resources = %+v", docs.Package.Resources)
	require.Len(t, docs.Graphs, 1, "graphs")
	assert.Len(t, docs.Graphs[0].Tasks, 3, "graphs = %+v", docs.Graphs)
}

// The package of the pkger seed (its S1 stack), indented with spaces as
// YAML requires, with the kinds it uses defined by `kind: Kind`
// documents. The seed misspells metadata on the bucket; that must be
// reported with a suggestion, along with the name it then lacks.
func TestParsePkgerSeedPackage(t *testing.T) {
	srcs, err := ReadFiles("testdata/parse/pkger_kinds.yaml", "testdata/parse/pkger_s1.yaml")
	require.NoError(t, err)
	builtin := kinds.Builtin()
	docs, err := Parse(Options{Catalogue: builtin}, srcs...)
	sameLines(t, parseErrLines(t, err), []string{
		`testdata/parse/pkger_s1.yaml:9:1: metadata.name: missing metadata.name`,
		`testdata/parse/pkger_s1.yaml:10:1: metadta: unknown field "metadta"; did you mean "metadata"?`,
	})
	_, ok := builtin.Lookup("Label")
	assert.False(t, ok, "the caller's catalogue was modified")
	_, ok = docs.Catalogue.Lookup("label")
	assert.True(t, ok, "the returned catalogue lacks the defined kind")
	var names []string
	for _, k := range docs.Kinds {
		names = append(names, k.Name)
	}
	assert.Equal(t, []string{"Label", "Bucket", "Dashboard", "Task"}, names, "kinds")
	res := docs.Package.Resources
	require.Len(t, res, 3, "resources")
	dash := res[2]
	require.Equal(t, "Dashboard", dash.Kind, "dashboard = %+v", dash)
	require.Equal(t, "charmed_saratoba", dash.Name, "dashboard = %+v", dash)
	require.Equal(t, []model.Ref{{Kind: "Label", Name: "lucid_einstein"}}, dash.Associations, "dashboard = %+v", dash)
	assert.Equal(t, map[string]any{"name": "dash_1"}, dash.Spec, "dashboard = %+v", dash)

	// Fixed, the package is valid.
	fixed := strings.Replace(string(srcs[1].Data), "metadta:", "metadata:", 1)
	_, err = Parse(Options{}, srcs[0], Source{Name: "fixed.yaml", Data: []byte(fixed)})
	require.NoError(t, err, "fixed seed")
}

func TestParseKindDefinitionErrors(t *testing.T) {
	src := `apiVersion: cairn/v1
kind: Kind
metadata: {name: Label}
spec:
  base: htp
  wrap: body
---
kind: Kind
metadata: {name: Graph}
spec: {base: http}
---
kind: Kind
metadata: {name: Thing}
spec: {base: file}
---
kind: Kind
metadata: {name: thing}
spec: {base: file}
---
kind: Label
metadata: {name: l}
spec: {name: x}
`
	_, err := Parse(Options{}, Source{Name: "k.yaml", Data: []byte(src)})
	sameLines(t, parseErrLines(t, err), []string{
		`k.yaml:3:18: metadata.name: kind "Label": unknown base kind "htp"; did you mean "http"?`,
		`k.yaml:9:18: metadata.name: "Graph" is reserved for Graph documents`,
		`k.yaml:17:18: metadata.name: kind "thing" is already defined (as "Thing")`,
		`k.yaml:20:7: kind: unknown kind "Label"`,
	})
}

// One package and one graph written in YAML, JSON and Jsonnet read into
// the same model.
func TestParseEncodingsAgree(t *testing.T) {
	var models []*Documents
	for _, name := range []string{"model.yaml", "model.json", "model.jsonnet"} {
		srcs, err := ReadFiles(filepath.Join("testdata/parse", name))
		require.NoError(t, err)
		docs, err := Parse(Options{ExtVars: map[string]string{"site": "lab"}}, srcs...)
		require.NoError(t, err, "%s: %v", name, err)
		for _, r := range docs.Package.Resources {
			r.Pos = model.Position{}
		}
		for _, g := range docs.Graphs {
			for _, task := range g.Tasks {
				task.Pos = model.Position{}
			}
		}
		docs.Package.Sources = nil
		docs.Catalogue = nil
		docs.Index = nil // positions differ by encoding
		models = append(models, docs)
	}
	require.Len(t, models[0].Package.Resources, 3, "yaml model is not the whole fixture: %+v", models[0])
	require.Len(t, models[0].Graphs, 1, "yaml model is not the whole fixture: %+v", models[0])
	require.Len(t, models[0].Graphs[0].Tasks, 3, "yaml model is not the whole fixture: %+v", models[0])
	require.Len(t, models[0].Kinds, 1, "yaml model is not the whole fixture: %+v", models[0])
	for i, name := range []string{"json", "jsonnet"} {
		assert.Equal(t, models[i+1], models[0], "%s model differs from yaml:\n yaml %s\n %s %s", name, dumpDocs(models[0]), name, dumpDocs(models[i+1]))
	}
}

func dumpDocs(d *Documents) string {
	var b strings.Builder
	for _, r := range d.Package.Resources {
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(sprintAny(*r)), "\n", " "))
		b.WriteString("; ")
	}
	for _, g := range d.Graphs {
		for _, task := range g.Tasks {
			b.WriteString(sprintAny(*task))
			b.WriteString("; ")
		}
	}
	return b.String()
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	write("b.yaml", "kind: directory\nmetadata: {name: b}\nspec: {path: /b}\n")
	write("a.json", `{"kind": "directory", "metadata": {"name": "a"}, "spec": {"path": "/a"}}`)
	write("c.jsonnet", `{kind: "directory", metadata: {name: "c"}, spec: {path: "/c"}}`)
	write("lib.libsonnet", `{}`)
	write("notes.txt", "not a document")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	srcs, err := ReadFiles(dir)
	require.NoError(t, err)
	var got []string
	for _, s := range srcs {
		got = append(got, filepath.Base(s.Name)+":"+string(s.Format))
	}
	want := []string{"a.json:json", "b.yaml:yaml", "c.jsonnet:jsonnet"}
	assert.Equal(t, want, got, "sources")
	docs, err := Parse(Options{}, srcs...)
	require.NoError(t, err, "parse: %v, %d resources", err, len(docs.Package.Resources))
	require.Len(t, docs.Package.Resources, 3, "parse: %v, %d resources", err, len(docs.Package.Resources))

	write("big.yaml", strings.Repeat("#", 2048))
	_, err = ReadFilesLimit(1024, filepath.Join(dir, "big.yaml"))
	require.Error(t, err, "big file")
	assert.Contains(t, err.Error(), "larger than the limit of 1 KiB", "big file: %v", err)
	_, err = ReadFiles(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err, "missing file")
	assert.ErrorIs(t, err, os.ErrNotExist, "missing file: %v", err)
}

func TestFormatDetection(t *testing.T) {
	tests := []struct {
		name, data string
		format     Format
		want       Format
	}{
		{"x.yaml", "", FormatAuto, FormatYAML},
		{"x.YML", "", FormatAuto, FormatYAML},
		{"x.json", "", FormatAuto, FormatJSON},
		{"x.libsonnet", "", FormatAuto, FormatJsonnet},
		{"https://example.com/pkg.jsonnet?ref=main", "", FormatAuto, FormatJsonnet},
		{"x.txt", `{"a": 1}`, FormatAuto, FormatJSON},
		{"x", `[{"a": 1}]`, FormatAuto, FormatJSON},
		{"x", "local a = 1; {a: a}", FormatAuto, FormatJsonnet},
		{"x", "{a: 1}", FormatAuto, FormatJsonnet},
		{"x", "// comment\n{}", FormatAuto, FormatJsonnet},
		{"x", "kind: File\n", FormatAuto, FormatYAML},
		{"x", "- id: a\n", FormatAuto, FormatYAML},
		{"x.json", "kind: File", FormatYAML, FormatYAML},
	}
	for _, tt := range tests {
		got := tt.format
		if got == FormatAuto {
			got = FormatOf(tt.name)
		}
		if got == FormatAuto {
			got = sniff([]byte(tt.data))
		}
		assert.Equal(t, tt.want, got, "%s %q: format %q, want %q", tt.name, tt.data, got, tt.want)
	}
}

func sprintAny(v any) string { return fmt.Sprintf("%+v", v) }
