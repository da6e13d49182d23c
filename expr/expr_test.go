package expr

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func envRef(key string, def ...any) map[string]any {
	body := map[string]any{"key": key}
	if len(def) > 0 {
		body["default"] = def[0]
	}
	return map[string]any{"envRef": body}
}

func secretRef(key string) map[string]any {
	return map[string]any{"secretRef": map[string]any{"key": key}}
}

func TestResolveEnvRefs(t *testing.T) {
	env := envOf(map[string]string{"SITE": "eu", "TIMEOUT": "45", "RATIO": "0.5", "DEBUG": "true", "WORD": "fast"})
	tests := []struct {
		name    string
		value   any
		want    any
		missing []string
	}{
		{"set without default", envRef("SITE"), "eu", nil},
		{"set with default", envRef("SITE", "us"), "eu", nil},
		{"unset with default", envRef("REGION", "us"), "us", nil},
		{"unset with numeric default keeps the number", envRef("PORT", 8086), int64(8086), nil},
		{"set, typed like an integer default", envRef("TIMEOUT", 60), int64(45), nil},
		{"set, typed like a float default", envRef("RATIO", 1.5), 0.5, nil},
		{"set, typed like a bool default", envRef("DEBUG", false), true, nil},
		{"set but not parseable as the default's type stays a string", envRef("WORD", 60), "fast", nil},
		{"unset without default is missing and empty", envRef("NOPE"), "", []string{"NOPE"}},
		{"template env", `hello {{ env "SITE" }}`, "hello eu", nil},
		{"template env unset is missing", `hello {{ env "GONE" }}`, "hello ", []string{"GONE"}},
		{"template env with default pipe is not missing", `{{ env "GONE" | default "x" }}`, "x", nil},
		{"template env with default call is not missing", `{{ default "y" (env "GONE") }}`, "y", nil},
		{"nested in a list", []any{envRef("SITE"), "{{ env \"SITE\" }}-b"}, []any{"eu", "eu-b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, missing, err := Resolve(map[string]any{"v": tt.value}, Context{Env: env})
			require.NoError(t, err, "Resolve")
			require.Equal(t, tt.want, out["v"], "v")
			require.Equal(t, tt.missing, missing.Env, "missing env")
		})
	}
}

func TestResolveUsesProcessEnvByDefault(t *testing.T) {
	t.Setenv("EXPR_TEST_SITE", "from-process")
	out, _, err := Resolve(map[string]any{"a": envRef("EXPR_TEST_SITE"), "b": `{{ env "EXPR_TEST_SITE" }}`}, Context{})
	require.NoError(t, err)
	require.Equal(t, "from-process", out["a"], "got %v", out)
	require.Equal(t, "from-process", out["b"], "got %v", out)
}

func TestResolveMissingIsSortedAndUnique(t *testing.T) {
	spec := map[string]any{
		"a": envRef("ZED"),
		"b": envRef("ALPHA"),
		"c": []any{envRef("ZED"), `{{ env "MID" }}{{ env "ALPHA" }}`},
		"d": secretRef("token"),
		"e": map[string]any{"x": secretRef("api-key"), "y": `{{ secret "token" }}`},
	}
	out, missing, err := Resolve(spec, Context{Env: envOf(nil)})
	require.NoError(t, err)
	want := Missing{Env: []string{"ALPHA", "MID", "ZED"}, Secrets: []string{"api-key", "token"}}
	require.Equal(t, want, missing, "missing")
	require.Equal(t, "", out["d"], "missing secret should resolve to empty")
	require.False(t, missing.Empty(), "missing secret should resolve to empty: %#v", out["d"])
}

func TestSecretsFromFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	yamlPath := filepath.Join(dir, "secrets.yaml")
	require.NoError(t, os.WriteFile(yamlPath, []byte("db-password: hunter2\ninflux:\n  token: tok-yaml\nport: 5432\n"), 0o600))
	jsonPath := filepath.Join(dir, "secrets.json")
	require.NoError(t, os.WriteFile(jsonPath, []byte(`{"api": "json-value"}`), 0o600))
	t.Setenv("CAIRN_SECRET_FROM_ENV", "env-value")
	t.Setenv("CAIRN_SECRET_DB_PASSWORD", "env-overrides-file")

	ys, err := LoadSecrets(yamlPath)
	require.NoError(t, err)
	js, err := LoadSecrets(jsonPath)
	require.NoError(t, err)
	envOnly, err := LoadSecrets("")
	require.NoError(t, err)
	tests := []struct {
		name    string
		secrets *Secrets
		key     string
		want    string
		ok      bool
	}{
		{"yaml nested flattened", ys, "influx.token", "tok-yaml", true},
		{"yaml number as string", ys, "port", "5432", true},
		{"env overrides file", ys, "db-password", "env-overrides-file", true},
		{"json", js, "api", "json-value", true},
		{"env only", envOnly, "from_env", "env-value", true},
		{"env name normalised", envOnly, "from-env", "env-value", true},
		{"unknown", js, "nope", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.secrets.Lookup(tt.key)
			require.Equal(t, tt.want, got, "Lookup(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
			require.Equal(t, tt.ok, ok, "Lookup(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		})
	}

	out, missing, err := Resolve(map[string]any{
		"headers": map[string]any{"Authorization": secretRef("influx.token")},
		"auth":    `Token {{ secret "api" }}`,
	}, Context{Secret: func(k string) (string, bool) {
		if v, ok := ys.Lookup(k); ok {
			return v, ok
		}
		return js.Lookup(k)
	}})
	require.NoError(t, err, "Resolve: %v %v", err, missing)
	require.True(t, missing.Empty(), "Resolve: %v %v", err, missing)
	require.Equal(t, "tok-yaml", out["headers"].(map[string]any)["Authorization"], "got %v", out)
	require.Equal(t, "Token json-value", out["auth"], "got %v", out)
}

func TestLoadSecretsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nope.yaml"), "read secrets"},
		{"not a map", write("list.yaml", "- a\n- b\n"), "must hold a map"},
		{"list value", write("bad.yaml", "k: [1, 2]\n"), `secret "k" must be a string`},
		{"invalid syntax hides content", write("broken.json", `{"k": "sup3rsecret"`), "not valid YAML or JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadSecrets(tt.path)
			require.Error(t, err, "err = %v, want containing %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "err = %v, want containing %q", err, tt.want)
			require.NotContains(t, err.Error(), "sup3rsecret", "error leaks file content: %v", err)
		})
	}
}

func TestSecretValuesNeverInErrors(t *testing.T) {
	secrets := NewSecrets(map[string]string{"tok": "s3cr3t-value"}, nil)
	c := Context{Secret: secrets.Lookup, Deps: map[string]map[string]any{"Label/a": {"id": "1"}}}
	tests := []struct {
		name string
		spec map[string]any
	}{
		{"dep named by a secret", map[string]any{"x": `{{ dep (secret "tok") }}`}},
		{"map key named by a secret", map[string]any{"x": `{{ index (dep "Label/a") (secret "tok") }}`}},
		{"secret in a failing condition-like value", map[string]any{"x": `{{ (secret "tok") | lower | dep }}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Resolve(tt.spec, c)
			require.Error(t, err, "expected an error")
			require.NotContains(t, err.Error(), "s3cr3t", "error leaks the secret: %v", err)
			require.Contains(t, err.Error(), Redacted, "error should show where the secret was: %v", err)
			require.NoError(t, errors.Unwrap(err), "redacted error must not unwrap to the original")
		})
	}
	_, err := Condition(`eq (dep (secret "tok")).id "1"`, c)
	require.Error(t, err, "condition")
	require.NotContains(t, err.Error(), "s3cr3t", "condition error = %v", err)
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		values []string
		want   string
	}{
		{"none", "all fine", nil, "all fine"},
		{"one", "token abc123 rejected", []string{"abc123"}, "token [redacted] rejected"},
		{"every occurrence", "abc and abc", []string{"abc"}, "[redacted] and [redacted]"},
		{"longest first", "key=abcdef", []string{"abc", "abcdef"}, "key=[redacted]"},
		{"empty values ignored", "x", []string{""}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in, tt.values)
			require.Equal(t, tt.want, got, "Redact")
		})
	}
}

func TestResolveDeps(t *testing.T) {
	deps := map[string]map[string]any{
		"Disk/data":  {"zone": "europe-west1-b", "size": 200, "tags": []string{"a", "b"}},
		"data":       {"zone": "europe-west1-b", "size": 200, "tags": []string{"a", "b"}},
		"stop-api":   {"exitCode": 0, "stdout": "stopped"},
		"Label/prod": {"id": "0a1b"},
	}
	tests := []struct {
		name    string
		value   string
		want    any
		wantErr string
	}{
		{"by bare name", "{{ .deps.data.zone }}", "europe-west1-b", ""},
		{"by ref", `{{ (dep "Disk/data").zone }}`, "europe-west1-b", ""},
		{"ref kind case-insensitive", `{{ (dep "disk/data").zone }}`, "europe-west1-b", ""},
		{"task id with dash", `{{ (dep "stop-api").stdout }}`, "stopped", ""},
		{"index form", `{{ index .deps "Label/prod" "id" }}`, "0a1b", ""},
		{"whole value keeps number", "{{ .deps.data.size }}", int64(200), ""},
		{"whole value keeps list", "{{ .deps.data.tags }}", []any{"a", "b"}, ""},
		{"interpolated number is text", "size={{ .deps.data.size }}", "size=200", ""},
		{"DepField expression", DepField("Label/prod", "id"), "0a1b", ""},
		{"DepField index form", DepField("stop-api", "exit-code"), nil, `map has no entry for key "exit-code"`},
		{"index out of range", `{{ index .deps.data.tags 5 }}`, nil, "index out of range: 5"},
		{"unknown dependency", `{{ (dep "Disk/other").zone }}`, nil, `no dependency "Disk/other"`},
		{"unknown field", "{{ .deps.data.region }}", nil, `v: at <.deps.data.region>: map has no entry for key "region"`},
		{"unknown dep by name", "{{ .deps.nope.zone }}", nil, `map has no entry for key "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Resolve(map[string]any{"v": tt.value}, Context{Deps: deps})
			if tt.wantErr != "" {
				require.Error(t, err, "err = %v, want containing %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "err = %v, want containing %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, out["v"], "v")
		})
	}
}

func TestResolveCollectsEveryErrorWithPaths(t *testing.T) {
	spec := map[string]any{
		"a":       "{{ .deps.x.y }}",
		"headers": map[string]any{"X-Id": "{{ nosuch }}"},
		"argv":    []any{"ok", "{{ .node.nope }}"},
		"bad":     map[string]any{"envRef": map[string]any{"name": "X"}},
	}
	_, _, err := Resolve(spec, Context{})
	require.Error(t, err, "expected errors")
	for _, want := range []string{"a: ", "headers.X-Id: ", `function "nosuch" not defined`, "argv[1]: ", `bad: unknown field "name" in envRef`} {
		assert.Contains(t, err.Error(), want, "error %q lacks %q", err, want)
	}
}

func TestResolveIsADeepCopy(t *testing.T) {
	spec := map[string]any{"body": map[string]any{"name": "x", "list": []any{"a"}}, "n": 3}
	out, _, err := Resolve(spec, Context{})
	require.NoError(t, err)
	out["body"].(map[string]any)["name"] = "changed"
	out["body"].(map[string]any)["list"].([]any)[0] = "changed"
	require.Equal(t, "x", spec["body"].(map[string]any)["name"], "Resolve shares nested values with its input")
	require.Equal(t, "a", spec["body"].(map[string]any)["list"].([]any)[0], "Resolve shares nested values with its input")
	require.Equal(t, int64(3), out["n"], "ints are normalised to int64")
}

func TestResolveVerbatim(t *testing.T) {
	spec := map[string]any{"path": "/etc/{{ .node.name }}.conf", "template": "port={{ .port }}", "vars": map[string]any{"port": envRef("PORT", 80)}}
	out, _, err := Resolve(spec, Context{Node: map[string]any{"name": "n1"}, Verbatim: []string{"template"}, Env: envOf(nil)})
	require.NoError(t, err)
	require.Equal(t, "port={{ .port }}", out["template"], "got %v", out)
	require.Equal(t, "/etc/n1.conf", out["path"], "got %v", out)
	text, _, err := Render(out["template"].(string), Context{Vars: out["vars"].(map[string]any)})
	require.NoError(t, err, "Render = %q, %v", text, err)
	require.Equal(t, "port=80", text, "Render = %q, %v", text, err)
}

func TestRender(t *testing.T) {
	c := Context{
		Vars: map[string]any{"port": 8080, "hosts": []any{"a", "b"}, "deps": "shadowed"},
		Node: map[string]any{"name": "n1", "roles": []any{"web"}},
		Env:  envOf(map[string]string{"SITE": "eu"}),
	}
	tests := []struct {
		src, want string
	}{
		{"listen {{ .port }}", "listen 8080"},
		{"listen {{ .vars.port }}", "listen 8080"},
		{"{{ range .hosts }}server {{ . }}\n{{ end }}", "server a\nserver b\n"},
		{"{{ .node.name }}@{{ env \"SITE\" }}", "n1@eu"},
		{"{{ printf \"%T\" .deps }}", "map[string]map[string]interface {}"},
	}
	for _, tt := range tests {
		got, _, err := Render(tt.src, c)
		require.NoError(t, err, "Render(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
		assert.Equal(t, tt.want, got, "Render(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
	}
}

func TestFunctions(t *testing.T) {
	c := Context{Node: map[string]any{"roles": []any{"web", "db"}, "name": "Node-1"}, Env: envOf(nil)}
	tests := []struct {
		src  string
		want any
	}{
		{`{{ "" | default "d" }}`, "d"},
		{`{{ "v" | default "d" }}`, "v"},
		{`{{ .node.roles | has "web" }}`, true},
		{`{{ has "cache" .node.roles }}`, false},
		{`{{ contains "od" .node.name }}`, true},
		{`{{ lower .node.name }}`, "node-1"},
		{`{{ upper .node.name }}`, "NODE-1"},
		{`{{ trim "  x  " }}`, "x"},
		{`{{ join "," .node.roles }}`, "web,db"},
		{`{{ split "," "a,b,c" }}`, []any{"a", "b", "c"}},
		{`{{ toJSON .node.roles }}`, `["web","db"]`},
		{`{{ sha256 "abc" }}`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{`{{ len .node.roles }}`, int64(2)},
	}
	for _, tt := range tests {
		out, _, err := ResolveValue(tt.src, c)
		if !assert.NoError(t, err, tt.src) {
			continue
		}
		assert.Equal(t, tt.want, out, "%s = %#v, want %#v", tt.src, out, tt.want)
	}
}

func TestCondition(t *testing.T) {
	c := Context{
		Node: map[string]any{"name": "n1", "id": "1", "roles": []any{"controller"}},
		Deps: map[string]map[string]any{"migrate": {"exitCode": 0}},
		Env:  envOf(map[string]string{"STAGE": "prod"}),
		Funcs: template.FuncMap{
			"changed": func(task string) bool { return task == "config" },
		},
	}
	tests := []struct {
		name    string
		src     string
		want    bool
		wantErr string
	}{
		{"empty is true", "", true, ""},
		{"blank is true", "   ", true, ""},
		{"bare pipeline true", `eq .node.name "n1"`, true, ""},
		{"bare pipeline false", `eq .node.name "n2"`, false, ""},
		{"wrapped", `{{ eq .node.name "n1" }}`, true, ""},
		{"wrapped with spaces and text trimmed", ` {{- if .node.roles | has "controller" }}true{{ else }}false{{ end -}} `, true, ""},
		{"and/or", `and (eq (env "STAGE") "prod") (not (eq .node.id "2"))`, true, ""},
		{"dependency output", `eq (dep "migrate").exitCode 0`, true, ""},
		{"runtime function from the execution", `changed "config"`, true, ""},
		{"runtime function false", `changed "other"`, false, ""},
		{"not a boolean", `.node.name`, false, `must yield true or false, got "n1"`},
		{"unknown function", `nosuch 1`, false, `function "nosuch" not defined`},
		{"bad syntax", `eq .node.name "n1`, false, "condition: "},
		{"missing key", `eq .node.zone "a"`, false, `map has no entry for key "zone"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Condition(tt.src, c)
			if tt.wantErr != "" {
				require.Error(t, err, "err = %v, want containing %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "err = %v, want containing %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got, "Condition(%q) = %v, want %v", tt.src, got, tt.want)
		})
	}
}

func TestRuntimeFuncsNeedAnExecution(t *testing.T) {
	_, err := Condition(`changed "x"`, Context{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "only available during an execution", "err = %v", err)
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		cond    bool
		wantErr string
	}{
		{"plain text", "no expressions here", false, ""},
		{"valid", `hello {{ env "SITE" | default "x" }}`, false, ""},
		{"deps", `{{ (dep "Label/a").id }} {{ .deps.disk.zone }}`, false, ""},
		{"unclosed action", `hello {{ env "SITE" `, false, "unclosed action"},
		{"unknown function", `{{ readFile "/etc/passwd" }}`, false, `function "readFile" not defined`},
		{"no network function", `{{ httpGet "http://x" }}`, false, `function "httpGet" not defined`},
		{"call refused", `{{ call .x }}`, false, `function "call" not defined`},
		{"define refused", `{{ define "x" }}a{{ end }}`, false, "not allowed"},
		{"template call refused", `{{ template "x" }}`, false, "not allowed"},
		{"unterminated range", `{{ range .x }}`, false, "unexpected EOF"},
		{"condition bare", `eq .node.name "n1"`, true, ""},
		{"condition runtime func", `changed "config"`, true, ""},
		{"condition unknown func", `bogus .x`, true, `function "bogus" not defined`},
		{"condition empty", "", true, ""},
		{"condition bad syntax", `eq (.node.name`, true, "condition: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.cond {
				err = CheckCondition(tt.src)
			} else {
				err = Check(tt.src)
			}
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err, "err = %v, want containing %q", err, tt.wantErr)
			require.Contains(t, err.Error(), tt.wantErr, "err = %v, want containing %q", err, tt.wantErr)
		})
	}
}

func TestCheckSpec(t *testing.T) {
	spec := map[string]any{
		"ok":      "{{ .deps.a.b }}",
		"bad":     "{{ nosuch }}",
		"headers": map[string]any{"A": secretRef(""), "B": map[string]any{"secretRef": "x"}},
		"list":    []any{"x", envRef("K"), map[string]any{"envRef": map[string]any{}}},
	}
	got := CheckSpec(spec)
	want := []Issue{
		{Path: "bad", Message: `invalid expression: line 1: function "nosuch" not defined`},
		{Path: "headers.A", Message: "secretRef.key must be a non-empty string"},
		{Path: "headers.B", Message: "secretRef must be an object {key}, got a string"},
		{Path: "list[2]", Message: "envRef.key is required"},
	}
	require.Equal(t, want, got, "CheckSpec =\n%#v\nwant\n%#v", got, want)
}

func TestLimitsStopHostileTemplates(t *testing.T) {
	small := Limits{MaxSteps: 10_000, MaxOutput: 64 << 10, Timeout: 5 * time.Second}
	tests := []struct {
		name   string
		src    string
		limits Limits
		want   string
	}{
		{"range over a huge integer", `{{ range 1000000000000 }}{{ end }}`, small, "loop iterations"},
		{"nested ranges", `{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`, small, "loop iterations"},
		{"range bomb with default limits", `{{ range 1000000000 }}{{ range 1000000000 }}{{ end }}{{ end }}`, Limits{}, "(expression limit)"},
		{"output flood", `{{ range 5000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}`, small, "output exceeds"},
		{"string doubling", `{{ $x := "aaaaaaaa" }}{{ range 60 }}{{ $x = printf "%s%s" $x $x }}{{ end }}{{ len $x }}`, small, "exceeds"},
		{"huge printf width", `{{ printf "%0999999999d" 1 }}`, small, "printf width"},
		{"star width", `{{ printf "%*d" 999999999 1 }}`, small, "'*' widths are not allowed"},
		{"split into too many items", `{{ $s := printf "%4000s" "" }}{{ $t := printf "%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s" $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s $s }}{{ len (split "" $t) }}`, Limits{}, "split yields more than"},
		{"slow loop hits the deadline", `{{ $s := printf "%4096s" "" }}{{ range 100000000 }}{{ $_ := sha256 $s }}{{ end }}`, Limits{MaxSteps: 1 << 40, Timeout: 100 * time.Millisecond}, "took longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ResolveValue(tt.src, Context{Limits: tt.limits})
			require.Error(t, err, "err = %v, want containing %q", err, tt.want)
			require.Contains(t, err.Error(), tt.want, "err = %v, want containing %q", err, tt.want)
			if !errors.Is(err, ErrLimit) {
				require.Contains(t, tt.want, "'*'", "err %v does not wrap ErrLimit", err)
			}
		})
	}
	_, err := Condition(`{{ range 1000000000 }}{{ end }}true`, Context{Limits: small})
	require.ErrorIs(t, err, ErrLimit, "condition bomb: err = %v", err)
}

func TestScan(t *testing.T) {
	spec := map[string]any{
		"url":     envRef("PLATFORM_URL", "http://x"),
		"headers": map[string]any{"Authorization": secretRef("influx-token")},
		"content": `hello {{ env "SITE" }} {{ secret "pw" }} from {{ .deps.disk.zone }}`,
		"links":   map[string]any{"ids": []any{DepField("Label/lucid_einstein", "id"), `{{ index .deps "stop-api" "stdout" }}`}},
		"broken":  "{{ env ",
		"plain":   "no refs",
	}
	env, secrets, deps := Scan(spec)
	want := []string{"PLATFORM_URL", "SITE"}
	assert.Equal(t, want, env, "env")
	want = []string{"influx-token", "pw"}
	assert.Equal(t, want, secrets, "secrets")
	want = []string{"Label/lucid_einstein", "disk", "stop-api"}
	assert.Equal(t, want, deps, "deps")
	e, s, d := Scan(map[string]any{"x": "nothing"})
	require.Nil(t, e, "empty scan = %v %v %v", e, s, d)
	require.Nil(t, s, "empty scan = %v %v %v", e, s, d)
	assert.Nil(t, d, "empty scan = %v %v %v", e, s, d)
	_, _, d = ScanString(`eq (dep "migrate").exitCode 0`)
	// a bare condition is not a template; ScanString expects template text
	assert.Nil(t, d, "bare pipeline scanned as template")
	_, _, d = ScanString(`{{ eq (dep "migrate").exitCode 0 }}`)
	assert.Equal(t, []string{"migrate"}, d, "ScanString deps")
}

func TestSecretValues(t *testing.T) {
	spec := map[string]any{"h": secretRef("a"), "t": `{{ secret "b" }}`, "m": secretRef("missing")}
	got := SecretValues(spec, NewSecrets(map[string]string{"a": "one", "b": "two", "c": "three"}, nil).Lookup)
	want := []string{"one", "two"}
	require.Equal(t, want, got, "SecretValues")
}

func TestClassify(t *testing.T) {
	tests := []struct {
		v    any
		want RefKind
	}{
		{"plain", Literal},
		{"{{ x }}", Template},
		{envRef("A"), EnvRef},
		{secretRef("A"), SecretRef},
		{map[string]any{"envRef": map[string]any{"key": "A"}, "other": 1}, Literal},
		{42, Literal},
	}
	for _, tt := range tests {
		got := Classify(tt.v)
		assert.Equal(t, tt.want, got, "Classify(%v) = %v, want %v", tt.v, got, tt.want)
	}
}

func BenchmarkResolve20Fields(b *testing.B) {
	spec := map[string]any{}
	for i := 0; i < 5; i++ {
		spec["plain"+string(rune('a'+i))] = "a literal value"
		spec["env"+string(rune('a'+i))] = envRef("SITE", "x")
		spec["tmpl"+string(rune('a'+i))] = `https://{{ env "SITE" }}.example.com/{{ .node.name }}`
		spec["dep"+string(rune('a'+i))] = `{{ (dep "Disk/data").zone }}`
	}
	c := Context{
		Env:  envOf(map[string]string{"SITE": "eu"}),
		Node: map[string]any{"name": "n1"},
		Deps: map[string]map[string]any{"Disk/data": {"zone": "z"}},
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, err := Resolve(spec, c)
		require.NoError(b, err)
	}
}

// Any template source either renders or fails with an error: nothing
// panics and nothing runs unbounded.
func FuzzResolveString(f *testing.F) {
	for _, seed := range []string{
		`hello {{ env "SITE" }}`, `{{ .deps.a.b }}`, `{{ range 10 }}x{{ end }}`, `{{ printf "%5d" 3 }}`,
		`{{ index .deps "a" "b" }}`, `{{ split "," "a,b" | join ";" }}`, `{{ define "a" }}{{ end }}`,
		`{{ $x := 1 }}{{ $x = 2 }}{{ $x }}`, `{{ with .node.name }}{{ . }}{{ end }}`, `{{ toJSON .node }}`,
	} {
		f.Add(seed)
	}
	c := Context{
		Env:    envOf(map[string]string{"SITE": "eu"}),
		Deps:   map[string]map[string]any{"a": {"b": "c", "n": 1}},
		Node:   map[string]any{"name": "n1", "roles": []any{"web"}},
		Limits: Limits{MaxSteps: 10_000, MaxOutput: 1 << 16, Timeout: time.Second},
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, _, err := ResolveValue(src, c)
		s, ok := out.(string)
		if ok && err == nil && len(s) > 1<<16 {
			require.LessOrEqual(t, len(s), len(src), "output above the cap: %d bytes", len(s))
		}
		_, _ = Condition(src, c)
		_ = Check(src)
	})
}
