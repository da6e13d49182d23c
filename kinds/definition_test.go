package kinds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
)

const labelYAML = `apiVersion: cairn/v1
kind: Kind
metadata: {name: Label}
spec:
  base: http
  wrap: body
  defaults:
    url: {envRef: {key: PLATFORM_URL, default: "http://127.0.0.1:8086"}}
    path: /api/v2/labels
    listPointer: /labels
  schema:
    type: object
    properties:
      name: {type: string, minLength: 1}
      description: {type: string}
      properties: {type: object, additionalProperties: {type: string}}
    required: [name]
    additionalProperties: false
  attributes: {name: property}
`

const bucketAndMotdYAML = `apiVersion: cairn/v1
kind: Kind
metadata:
  name: Bucket
  description: an InfluxDB bucket
spec:
  base: http
  wrap: body
  defaults:
    url: {envRef: {key: PLATFORM_URL, default: "http://127.0.0.1:8086"}}
    path: /api/v2/buckets
    headers: {Authorization: {secretRef: {key: influx-token}}}
    body: {orgID: org-1}
  associations: {path: /labels, field: labelID}
  schema:
    type: object
    properties:
      name: {type: string}
      retentionRules: {type: array, items: {type: object}}
    required: [name]
    additionalProperties: false
---
apiVersion: cairn/v1
kind: Kind
metadata: {name: Motd}
spec:
  base: file
  defaults: {path: /etc/motd, mode: "0644"}
`

const serviceJSON = `[
  {"apiVersion": "cairn/v1", "kind": "Kind", "metadata": {"name": "Svc"},
   "spec": {"base": "external", "wrap": "config", "defaults": {"program": ["/usr/local/bin/svc"]},
            "attributes": {"name": "namevar", "state": "read_only"}}}
]`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

func derivedCatalogue(t *testing.T) *Catalogue {
	t.Helper()
	dir := writeFiles(t, map[string]string{
		"label.yaml":         labelYAML,
		"bucket.yml":         bucketAndMotdYAML,
		"service.json":       serviceJSON,
		"README.txt":         "not a kind",
		"nested/ignore.yaml": "kind: nonsense",
	})
	ks, err := LoadDir(dir)
	require.NoError(t, err, "LoadDir")
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	want := []string{"Bucket", "Motd", "Label", "Svc"}
	require.Equal(t, want, names, "loaded %v, want %v (files in name order, documents in file order)", names, want)
	c := Builtin().Clone()
	require.NoError(t, c.AddAll(ks), "AddAll")
	return c
}

func TestDerivedKindsFromFiles(t *testing.T) {
	c := derivedCatalogue(t)
	require.Equal(t, []string{"Bucket", "Label", "Motd", "Svc", "copy_files", "directory", "exec", "external", "file", "file_line", "group", "hook", "http", "package", "reboot", "service", "skipped", "stage", "sync", "unix_group", "user"}, c.Names(), "Names")
	label, ok := c.Lookup("label")
	require.True(t, ok, "Lookup(label) = %+v, %v", label, ok)
	require.Equal(t, "Label", label.Name, "Lookup(label) = %+v, %v", label, ok)
	require.Equal(t, "http", label.Base, "Lookup(label) = %+v, %v", label, ok)
	require.Equal(t, "body", label.Wrap, "Lookup(label) = %+v, %v", label, ok)
	bucket, _ := c.Lookup("BUCKET")
	require.Equal(t, "an InfluxDB bucket", bucket.Description, "bucket = %+v", bucket)
	require.NotNil(t, bucket.Associations, "bucket = %+v", bucket)
	require.Equal(t, LinkSpec{Path: "/labels", Field: "labelID"}, *bucket.Associations, "bucket = %+v", bucket)
	got := c.AttrKind("Label", "name")
	assert.Equal(t, Property, got, "AttrKind(Label, name)")
	got = c.AttrKind("Svc", "state")
	assert.Equal(t, ReadOnly, got, "AttrKind(Svc, state)")
	assert.Equal(t, "Label", c.Suggest("Lable"), "Suggest(Lable)")

	tests := []struct {
		name string
		kind string
		spec map[string]any
		want []SpecError
	}{
		{"label valid", "Label", map[string]any{"name": "lucid_einstein", "properties": map[string]any{"color": "#fff"}}, nil},
		{"label name from env", "label", map[string]any{"name": map[string]any{"envRef": map[string]any{"key": "LABEL"}}}, nil},
		{"label own schema errors", "Label", map[string]any{"nmae": "x", "description": 5}, []SpecError{
			{"spec.description", "expected string, got number"},
			{"spec.name", `missing required field "name"`},
			{"spec.nmae", `unknown field "nmae"; did you mean "name"?`},
		}},
		{"label nested", "Label", map[string]any{"name": "x", "properties": map[string]any{"color": 1}}, []SpecError{
			{"spec.properties.color", "expected string, got number"},
		}},
		{"bucket", "Bucket", map[string]any{"name": "b", "retentionRules": []any{map[string]any{"everySeconds": 3600}}}, nil},
		{"motd without own schema uses the base", "Motd", map[string]any{"content": "hello"}, nil},
		{"motd base errors keep spec paths", "motd", map[string]any{"contnet": "hello"}, []SpecError{
			{"spec.contnet", `unknown field "contnet"; did you mean "content"?`},
		}},
		{"service without schema wraps config", "Svc", map[string]any{"size": "200gb", "zone": "{{ .deps.disk.zone }}"}, nil},
		{"service read-only attribute", "Svc", map[string]any{"state": "up"}, []SpecError{
			{"spec.state", `"state" is read-only: it is reported by the system and cannot be set`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.ValidateSpec(tt.kind, tt.spec)
			require.Equal(t, tt.want, got, "ValidateSpec =\n  %v\nwant\n  %v", got, tt.want)
		})
	}
}

func TestBaseSpecOfDerivedKinds(t *testing.T) {
	c := derivedCatalogue(t)
	assoc := []model.Ref{{Kind: "Label", Name: "lucid_einstein"}, {Kind: "Label", Name: `odd "name"`}, {Kind: "label", Name: "lucid_einstein"}}
	tests := []struct {
		name  string
		kind  string
		spec  map[string]any
		assoc []model.Ref
		base  string
		want  map[string]any
	}{
		{"wrapped without associations spec", "Label", map[string]any{"name": "x"}, nil, "http", map[string]any{
			"url":         map[string]any{"envRef": map[string]any{"key": "PLATFORM_URL", "default": "http://127.0.0.1:8086"}},
			"path":        "/api/v2/labels",
			"listPointer": "/labels",
			"body":        map[string]any{"name": "x"},
		}},
		{"wrapped with links", "bucket", map[string]any{"name": "b"}, assoc, "http", map[string]any{
			"url":     map[string]any{"envRef": map[string]any{"key": "PLATFORM_URL", "default": "http://127.0.0.1:8086"}},
			"path":    "/api/v2/buckets",
			"headers": map[string]any{"Authorization": map[string]any{"secretRef": map[string]any{"key": "influx-token"}}},
			"body":    map[string]any{"orgID": "org-1", "name": "b"},
			"links": map[string]any{"path": "/labels", "field": "labelID", "ids": []any{
				`{{ (dep "Label/lucid_einstein").id }}`,
				`{{ (dep "Label/odd \"name\"").id }}`,
			}},
		}},
		{"no associations still emits an empty link list", "Bucket", map[string]any{"name": "b"}, nil, "http", map[string]any{
			"url":     map[string]any{"envRef": map[string]any{"key": "PLATFORM_URL", "default": "http://127.0.0.1:8086"}},
			"path":    "/api/v2/buckets",
			"headers": map[string]any{"Authorization": map[string]any{"secretRef": map[string]any{"key": "influx-token"}}},
			"body":    map[string]any{"orgID": "org-1", "name": "b"},
			"links":   map[string]any{"path": "/labels", "field": "labelID", "ids": []any{}},
		}},
		{"merged without wrap", "Motd", map[string]any{"content": "hi", "mode": "0600"}, nil, "file", map[string]any{
			"path": "/etc/motd", "mode": "0600", "content": "hi",
		}},
		{"wrapped into config", "Svc", map[string]any{"size": 1}, nil, "external", map[string]any{
			"program": []any{"/usr/local/bin/svc"}, "config": map[string]any{"size": 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, out, err := c.BaseSpec(tt.kind, tt.spec, tt.assoc)
			require.NoError(t, err)
			require.Equal(t, tt.base, base, "BaseSpec = %s\n  %#v\nwant %s\n  %#v", base, out, tt.base, tt.want)
			require.Equal(t, tt.want, out, "BaseSpec = %s\n  %#v\nwant %s\n  %#v", base, out, tt.base, tt.want)
			errs := c.ValidateSpec(base, out)
			require.Empty(t, errs, "base spec does not validate against %s: %v", base, errs)
			// The result shares nothing with the kind's defaults or the input.
			if body, ok := out["body"].(map[string]any); ok {
				body["orgID"] = "mutated"
				out["url"].(map[string]any)["envRef"] = "mutated"
				_, again, _ := c.BaseSpec(tt.kind, tt.spec, tt.assoc)
				require.NotEqual(t, "mutated", again["body"].(map[string]any)["orgID"], "BaseSpec shares defaults between calls")
				require.NotEqual(t, "mutated", again["url"].(map[string]any)["envRef"], "BaseSpec shares defaults between calls")
				_, ok := tt.spec["orgID"]
				require.False(t, ok, "BaseSpec changed its input")
			}
		})
	}
}

// The link expressions BaseSpec writes resolve with expr against the
// dependency's outputs, and the env default fills the URL.
func TestBaseSpecLinksResolve(t *testing.T) {
	c := derivedCatalogue(t)
	_, out, err := c.BaseSpec("Bucket", map[string]any{"name": "b"}, []model.Ref{{Kind: "Label", Name: "lucid_einstein"}, {Kind: "Label", Name: "b2"}})
	require.NoError(t, err)
	_, _, deps := expr.Scan(out)
	want := []string{"Label/b2", "Label/lucid_einstein"}
	require.Equal(t, want, deps, "Scan deps")
	resolved, missing, err := expr.Resolve(out, expr.Context{
		Env:    func(string) (string, bool) { return "", false },
		Secret: func(k string) (string, bool) { return "tok", k == "influx-token" },
		Deps: map[string]map[string]any{
			"Label/lucid_einstein": {"id": "0a1"},
			"Label/b2":             {"id": "0b2"},
		},
	})
	require.NoError(t, err, "Resolve: %v %v", err, missing)
	require.True(t, missing.Empty(), "Resolve: %v %v", err, missing)
	assert.Equal(t, "http://127.0.0.1:8086", resolved["url"], "url")
	ids := resolved["links"].(map[string]any)["ids"]
	assert.Equal(t, []any{"0a1", "0b2"}, ids, "ids")
	h := resolved["headers"].(map[string]any)["Authorization"]
	assert.Equal(t, "tok", h, "Authorization")
}

func TestAddRefuses(t *testing.T) {
	httpDefaults := map[string]any{"url": "http://x", "path": "/l"}
	tests := []struct {
		name string
		kind Kind
		want string
	}{
		{"no name", Kind{Base: "http"}, "kind has no name"},
		{"duplicate, other case", Kind{Name: "label", Base: "http", Wrap: "body", Defaults: httpDefaults}, `kind "label" is already defined (as "Label")`},
		{"built-in name", Kind{Name: "File", Base: "file"}, `kind "File" is already defined (as "file")`},
		{"task type name", Kind{Name: "Shell", Base: "exec"}, "clashes with the task type"},
		{"slash in name", Kind{Name: "a/b", Base: "http"}, "may not contain '/'"},
		{"no base", Kind{Name: "X"}, "base is required"},
		{"unknown base", Kind{Name: "X", Base: "htp"}, `unknown base kind "htp"; did you mean "http"?`},
		{"derived base", Kind{Name: "X", Base: "Label"}, `base "Label" is itself derived; use its base "http"`},
		{"structural base", Kind{Name: "X", Base: "group"}, "cannot be a base"},
		{"bad attribute kind", Kind{Name: "X", Base: "http", Wrap: "body", Defaults: httpDefaults, Attributes: map[string]AttrKind{"a": "readonly"}}, `attribute "a" has unknown kind "readonly"`},
		{"schema does not compile", Kind{Name: "X", Base: "http", Wrap: "body", Defaults: httpDefaults, Schema: []byte(`{"type": "objekt"}`)}, "schema does not compile"},
		{"schema not JSON", Kind{Name: "X", Base: "http", Schema: []byte(`{`)}, "schema is not valid JSON"},
		{"schema refers to a file", Kind{Name: "X", Base: "http", Wrap: "body", Defaults: httpDefaults, Schema: []byte(`{"$ref": "file:///etc/passwd"}`)}, "schemas may not refer to other documents"},
		{"defaults typo", Kind{Name: "X", Base: "http", Wrap: "body", Defaults: map[string]any{"url": "http://x", "path": "/l", "listPonter": "/x"}}, `defaults.listPonter: unknown field "listPonter"; did you mean "listPointer"?`},
		{"defaults incomplete with wrap", Kind{Name: "X", Base: "http", Wrap: "body", Defaults: map[string]any{"url": "http://x"}}, `defaults.path: missing required field "path"`},
		{"wrap not an object field", Kind{Name: "X", Base: "http", Wrap: "path", Defaults: map[string]any{"url": "http://x"}}, `wrap: field "path" of http is not an object`},
		{"associations on a file", Kind{Name: "X", Base: "file", Associations: &LinkSpec{Path: "/l", Field: "f"}}, "only supported on http kinds"},
		{"associations incomplete", Kind{Name: "X", Base: "http", Associations: &LinkSpec{Path: "/l"}}, "associations need both path and field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Builtin()
			require.NoError(t, c.Add(Kind{Name: "Label", Base: "http", Wrap: "body", Defaults: httpDefaults}))
			err := c.Add(tt.kind)
			require.Error(t, err, "Add err = %v, want containing %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "Add err = %v, want containing %q", err, tt.want)
			if tt.kind.Name != "" && !strings.EqualFold(tt.kind.Name, "label") && !strings.EqualFold(tt.kind.Name, "file") && !strings.EqualFold(tt.kind.Name, "shell") {
				_, ok := c.Lookup(tt.kind.Name)
				require.False(t, ok, "a refused kind was added")
			}
		})
	}
}

func TestParseKindDefinitionErrors(t *testing.T) {
	doc := map[string]any{
		"apiVersion": "cairn/v2",
		"kind":       "Kynd",
		"metdata":    map[string]any{},
		"spec": map[string]any{
			"base":         5,
			"wrapp":        "body",
			"defaults":     "none",
			"associations": map[string]any{"path": "/labels"},
			"schema":       "object",
			"attributes":   map[string]any{"name": "propery"},
			"autoEdges":    []any{map[string]any{"kind": "directory", "from": "p", "attr": "path", "match": "prefix"}},
		},
	}
	_, err := ParseKindDefinition(doc)
	require.Error(t, err, "expected errors")
	for _, want := range []string{
		`apiVersion: expected "cairn/v1", got "cairn/v2"`,
		`kind: expected "Kind", got "Kynd"`,
		`metdata: unknown field "metdata"; did you mean "metadata"?`,
		`metadata: expected an object with a name`,
		`spec.base: expected a string, got a number`,
		`spec.wrapp: unknown field "wrapp"; did you mean "wrap"?`,
		`spec.defaults: expected an object, got a string`,
		`spec.associations.field: a string is required`,
		`spec.schema: expected a JSON Schema object, got a string`,
		`spec.attributes.name: unknown attribute kind "propery" (want namevar, read_only, init_only, parameter or property); did you mean "property"?`,
		`spec.autoEdges[0].match: expected "parent-path" or "equal", got "prefix"`,
	} {
		assert.Contains(t, err.Error(), want, "error lacks %q:\n%v", want, err)
	}

	k, err := ParseKindDefinition(map[string]any{
		"kind": "kind", "metadata": map[string]any{"name": " Widget "},
		"spec": map[string]any{"base": "http", "verbatim": []any{"template"}, "autoEdges": []any{map[string]any{"kind": "directory", "from": "cwd", "attr": "path", "match": "equal"}}},
	})
	require.NoError(t, err)
	require.Equal(t, "Widget", k.Name, "kind = %+v", k)
	require.Equal(t, "http", k.Base, "kind = %+v", k)
	require.Equal(t, []string{"template"}, k.Verbatim, "kind = %+v", k)
	require.Len(t, k.AutoEdges, 1, "kind = %+v", k)
}

func TestLoadDirReportsEveryBadFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a-good.yaml":  labelYAML,
		"b-bad.yaml":   "kind: Kind\nmetadata: {name: X}\nspec: {base: http}\n---\nkind: Kind\nmetadata: {}\nspec: {base: http}\n",
		"c-broken.yml": "kind: Kind\n  metadata: [",
		"d-list.json":  `[1]`,
		"e-bad.json":   `{"kind": `,
	})
	ks, err := LoadDir(dir)
	require.Error(t, err, "expected errors")
	require.Len(t, ks, 2, "good kinds")
	require.Equal(t, "Label", ks[0].Name, "good kinds = %v", ks)
	require.Equal(t, "X", ks[1].Name, "good kinds = %v", ks)
	for _, want := range []string{
		filepath.Join(dir, "b-bad.yaml") + `: document 1: kind definition: metadata.name: a kind needs a name`,
		filepath.Join(dir, "c-broken.yml") + ": invalid YAML",
		filepath.Join(dir, "d-list.json") + ": document 0: expected a kind definition object, got a number",
		filepath.Join(dir, "e-bad.json") + ": invalid JSON",
	} {
		assert.Contains(t, err.Error(), want, "error lacks %q:\n%v", want, err)
	}
	_, err = LoadDir(filepath.Join(dir, "nope"))
	require.Error(t, err, "missing directory should fail")
}
