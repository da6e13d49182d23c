package kinds

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envRef(key string) map[string]any {
	return map[string]any{"envRef": map[string]any{"key": key}}
}

func secretRef(key string) map[string]any {
	return map[string]any{"secretRef": map[string]any{"key": key}}
}

func TestBuiltinValidSpecs(t *testing.T) {
	c := Builtin()
	tests := []struct {
		kind string
		spec map[string]any
	}{
		{"file", map[string]any{"path": "/etc/motd", "content": "hello", "mode": "0644"}},
		{"file", map[string]any{"path": "motd", "contentBase64": "aGVsbG8=", "mode": 420}},
		{"file", map[string]any{"path": "/etc/app.conf", "template": "port={{ .port }}", "vars": map[string]any{"port": 80}, "mode": "644"}},
		{"file", map[string]any{"path": "/etc/only-mode", "mode": "0600"}},
		{"file", map[string]any{"path": "/etc/old", "ensure": "absent"}},
		{"File", map[string]any{"path": "/etc/motd", "content": "x", "ensure": "present"}},
		{"directory", map[string]any{"path": "/srv/app", "mode": "0755"}},
		{"directory", map[string]any{"path": "/srv/old", "ensure": "absent"}},
		{"exec", map[string]any{"command": "systemctl stop api", "undo": "systemctl start api", "timeout": 60}},
		{"exec", map[string]any{"argv": []any{"/bin/true"}, "env": map[string]any{"A": "b"}, "cwd": "/srv", "timeout": "1m30s", "creates": "/srv/done", "unless": "test -f x", "onlyif": "true", "returns": []any{0, 2}}},
		{"exec", map[string]any{"argv": []string{"/bin/echo", "hi"}, "undo": []any{"/bin/rm", "x"}, "timeout": 1.5}},
		{"http", map[string]any{
			"url": "http://127.0.0.1:8086", "path": "/api/v2/labels", "body": map[string]any{"name": "x"},
			"idPointer": "/id", "headers": map[string]any{"Authorization": "Token x"}, "updateMethod": "PUT",
			"expect":   map[string]any{"create": []any{201}, "delete": []any{204, 404}},
			"readPath": "{path}/{id}", "listPath": "/api/v2/labels", "listPointer": "/labels",
			"links": map[string]any{"path": "/labels", "field": "labelID", "ids": []any{"1"}},
		}},
		{"external", map[string]any{"program": "/usr/local/bin/res", "config": map[string]any{"size": "200gb"}}},
		{"external", map[string]any{"program": []any{"python3", "res.py"}, "env": map[string]any{"X": "1"}, "timeout": "30s"}},
		{"external", map[string]any{"image": "acme/deployster-gcp-disk:1", "config": map[string]any{}}},
		{"group", map[string]any{"fault_tolerance": "30%", "anything": []any{1}}},
		{"stage", nil},
		{"skipped", map[string]any{"cmd": "whatever"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			errs := c.ValidateSpec(tt.kind, tt.spec)
			require.Empty(t, errs, "ValidateSpec(%s, %v) = %v, want no errors", tt.kind, tt.spec, errs)
		})
	}
}

func TestBuiltinInvalidSpecs(t *testing.T) {
	c := Builtin()
	tests := []struct {
		name string
		kind string
		spec map[string]any
		want []SpecError
	}{
		{"file unknown field", "file", map[string]any{"path": "/x", "contnet": "a"}, []SpecError{
			{"spec.contnet", `unknown field "contnet"; did you mean "content"?`},
		}},
		{"file unknown field, nothing close", "file", map[string]any{"path": "/x", "owner": "root"}, []SpecError{
			{"spec.owner", `unknown field "owner"`},
		}},
		{"file path missing", "file", map[string]any{"content": "a"}, []SpecError{
			{"spec.path", `missing required field "path"`},
		}},
		{"file path wrong type", "file", map[string]any{"path": 5}, []SpecError{
			{"spec.path", "expected string, got number"},
		}},
		{"file mode bad string", "file", map[string]any{"path": "/x", "mode": "rwxr-xr-x"}, []SpecError{
			{"spec.mode", `"rwxr-xr-x" does not match the pattern ^0?[0-7]{3,4}$`},
		}},
		{"file mode wrong type", "file", map[string]any{"path": "/x", "mode": true}, []SpecError{
			{"spec.mode", "expected string or integer, got boolean"},
		}},
		{"file mode too large", "file", map[string]any{"path": "/x", "mode": 70000}, []SpecError{
			{"spec.mode", "must be at most 4095, got 70000"},
		}},
		{"file ensure typo", "file", map[string]any{"path": "/x", "ensure": "presnt"}, []SpecError{
			{"spec.ensure", `must be one of "present", "absent", got "presnt"; did you mean "present"?`},
		}},
		{"file two contents", "file", map[string]any{"path": "/x", "content": "a", "template": "b"}, []SpecError{
			{"spec.template", `set only one of "content", "contentBase64", "template" (both "content" and "template" are set)`},
		}},
		{"file bad base64", "file", map[string]any{"path": "/x", "contentBase64": "not base64!"}, []SpecError{
			{"spec.contentBase64", "is not valid base64"},
		}},
		{"file read-only checksum", "file", map[string]any{"path": "/x", "checksum": strings.Repeat("a", 64)}, []SpecError{
			{"spec.checksum", `"checksum" is read-only: it is reported by the system and cannot be set`},
		}},
		{"file vars without template", "file", map[string]any{"path": "/x", "content": "a", "vars": map[string]any{}}, []SpecError{
			{"spec.vars", `vars are only used with "template"`},
		}},
		{"file bad template", "file", map[string]any{"path": "/x", "template": "{{ .a "}, []SpecError{
			{"spec.template", "invalid expression: line 1: unclosed action"},
		}},
		{"directory unknown field", "directory", map[string]any{"path": "/x", "recurse": true}, []SpecError{
			{"spec.recurse", `unknown field "recurse"`},
		}},
		{"directory empty path", "directory", map[string]any{"path": ""}, []SpecError{
			{"spec.path", "must be at least 1 characters long"},
		}},
		{"exec neither command nor argv", "exec", map[string]any{"cwd": "/srv"}, []SpecError{
			{"spec", `one of "command", "argv" is required`},
		}},
		{"exec both command and argv", "exec", map[string]any{"command": "ls", "argv": []any{"ls"}}, []SpecError{
			{"spec.argv", `set only one of "command", "argv" (both "command" and "argv" are set)`},
		}},
		{"exec bad timeout string", "exec", map[string]any{"command": "ls", "timeout": "5 parsecs"}, []SpecError{
			{"spec.timeout", `invalid timeout "5 parsecs": want seconds or a duration such as "90s"`},
		}},
		{"exec negative timeout", "exec", map[string]any{"command": "ls", "timeout": -1}, []SpecError{
			{"spec.timeout", "must be at least 0, got -1"},
		}},
		{"exec returns item type", "exec", map[string]any{"command": "ls", "returns": []any{0, "one"}}, []SpecError{
			{"spec.returns[1]", "expected integer, got string"},
		}},
		{"exec env value type", "exec", map[string]any{"command": "ls", "env": map[string]any{"PORT": 80}}, []SpecError{
			{"spec.env.PORT", "expected string, got number"},
		}},
		{"exec undo wrong type", "exec", map[string]any{"command": "ls", "undo": 5}, []SpecError{
			{"spec.undo", "expected string or array, got number"},
		}},
		{"exec unknown with suggestion", "exec", map[string]any{"comand": "ls"}, []SpecError{
			{"spec", `one of "command", "argv" is required`},
			{"spec.comand", `unknown field "comand"; did you mean "command"?`},
		}},
		{"http missing url and path", "http", map[string]any{"body": map[string]any{}}, []SpecError{
			{"spec.path", `missing required field "path"`},
			{"spec.url", `missing required field "url"`},
		}},
		{"http nested errors", "http", map[string]any{
			"url": "ftp://x", "path": "/a", "updateMethod": "POST",
			"headers": map[string]any{"Authorization": 5},
			"expect":  map[string]any{"create": []any{99}, "raed": []any{200}},
			"links":   map[string]any{"path": "/labels"},
		}, []SpecError{
			{"spec.expect.create[0]", "must be at least 100, got 99"},
			{"spec.expect.raed", `unknown field "raed"; did you mean "read"?`},
			{"spec.headers.Authorization", "expected string, got number"},
			{"spec.links.field", `missing required field "field"`},
			{"spec.links.ids", `missing required field "ids"`},
			{"spec.updateMethod", `must be one of "PUT", "PATCH", got "POST"`},
			{"spec.url", `"ftp://x" does not match the pattern ^https?://`},
		}},
		{"http id of an object to adopt", "http", map[string]any{"url": "http://x", "path": "/a", "id": "1"}, nil},
		{"external neither", "external", map[string]any{"config": map[string]any{}}, []SpecError{
			{"spec", `one of "program", "image" is required`},
		}},
		{"external both", "external", map[string]any{"program": "/x", "image": "y"}, []SpecError{
			{"spec.image", `set only one of "program", "image" (both "program" and "image" are set)`},
		}},
		{"external config not object", "external", map[string]any{"image": "y", "config": "size=1"}, []SpecError{
			{"spec.config", "expected object, got string"},
		}},
		{"unknown kind", "Fiel", nil, []SpecError{
			{"kind", `unknown kind "Fiel"; did you mean "file"?`},
		}},
		{"unknown kind far from all", "kubernetes", nil, []SpecError{
			{"kind", `unknown kind "kubernetes"`},
		}},
		{"malformed references", "exec", map[string]any{"command": "echo {{ nosuch }}", "env": map[string]any{"A": map[string]any{"envRef": "X"}}}, []SpecError{
			{"spec.command", `invalid expression: line 1: function "nosuch" not defined`},
			{"spec.env.A", "envRef must be an object {key, default}, got a string"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.ValidateSpec(tt.kind, tt.spec)
			require.Equal(t, tt.want, got, "ValidateSpec =\n  %v\nwant\n  %v", got, tt.want)
		})
	}
}

func TestValidateAtRoot(t *testing.T) {
	got := Builtin().ValidateAt("shell", "parameters", map[string]any{"cmd": "ls", "retries": 1.5})
	want := []SpecError{{"parameters.retries", "expected integer, got number"}}
	require.Equal(t, want, got)
}

func TestReferencesAcceptedWhereScalarsGo(t *testing.T) {
	c := Builtin()
	tests := []struct {
		name string
		kind string
		spec map[string]any
	}{
		{"int timeout from env", "exec", map[string]any{"command": "ls", "timeout": envRef("T")}},
		{"mode from a dependency", "file", map[string]any{"path": "/x", "mode": "{{ .deps.x.mode }}"}},
		{"mode as an env ref", "file", map[string]any{"path": "/x", "mode": envRef("MODE")}},
		{"ensure from env", "file", map[string]any{"path": "/x", "ensure": envRef("ENSURE")}},
		{"path templated", "file", map[string]any{"path": "/srv/{{ .node.name }}/motd", "content": "x"}},
		{"header secret", "http", map[string]any{"url": "http://x", "path": "/a", "headers": map[string]any{"Authorization": secretRef("token")}}},
		{"url from env", "http", map[string]any{"url": envRef("PLATFORM_URL"), "path": "/a"}},
		{"url templated", "http", map[string]any{"url": `{{ env "PLATFORM_URL" }}`, "path": "/a"}},
		{"whole body from a dependency", "http", map[string]any{"url": "http://x", "path": "/a", "body": "{{ toJSON .deps.x }}"}},
		{"returns item from env", "exec", map[string]any{"command": "ls", "returns": []any{0, envRef("CODE")}}},
		{"argv element secret", "exec", map[string]any{"argv": []any{"login", secretRef("pw")}}},
		{"expect list from env", "http", map[string]any{"url": "http://x", "path": "/a", "expect": map[string]any{"create": envRef("CODES")}}},
		{"shell retries from env", "shell", map[string]any{"cmd": "ls", "retries": envRef("R")}},
		{"upload_file data secret", "upload_file", map[string]any{"path": "/x", "data": secretRef("cert")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := c.ValidateSpec(tt.kind, tt.spec)
			require.Empty(t, errs, "ValidateSpec = %v, want no errors", errs)
		})
	}
	// A reference does not hide problems elsewhere in the same spec.
	errs := c.ValidateSpec("exec", map[string]any{"command": "ls", "timeout": envRef("T"), "cwdd": "/x"})
	require.Len(t, errs, 1)
	require.Equal(t, "spec.cwdd", errs[0].Path, "got %v", errs)
}

func TestLookup(t *testing.T) {
	c := Builtin()
	tests := []struct {
		name     string
		wantKind string
		ok       bool
	}{
		{"file", "file", true},
		{"File", "file", true},
		{"FILE", "file", true},
		{"Directory", "directory", true},
		{"exec", "exec", true},
		{"shell", "exec", true},
		{"Shell", "exec", true},
		{"puppet", "exec", true},
		{"upload_file", "file", true},
		{"group", "group", true},
		{"stage", "stage", true},
		{"skipped", "skipped", true},
		{"http", "http", true},
		{"external", "external", true},
		{"nope", "", false},
	}
	for _, tt := range tests {
		k, ok := c.Lookup(tt.name)
		require.Equal(t, tt.ok, ok, "Lookup(%q) = %v, %v; want %q, %v", tt.name, k, ok, tt.wantKind, tt.ok)
		if ok {
			assert.Equal(t, tt.wantKind, k.Name, "Lookup(%q) = %v, %v; want %q, %v", tt.name, k, ok, tt.wantKind, tt.ok)
		}
	}
	want := []string{"copy_files", "directory", "exec", "external", "file", "file_line", "group", "hook", "http", "package", "reboot", "service", "skipped", "stage", "sync", "unix_group", "user"}
	assert.Equal(t, want, c.Names(), "Names")
	want = []string{"cobbler_sync", "erase_node", "master_shell", "move_to_bootstrap", "puppet", "shell", "upload_file"}
	assert.Equal(t, want, c.TaskTypes(), "TaskTypes")
	require.True(t, c.IsTaskType("Shell"), "IsTaskType")
	assert.False(t, c.IsTaskType("exec"), "IsTaskType")
	// A Lookup result is a copy: changing it does not change the catalogue.
	k, _ := c.Lookup("file")
	k.Name = "changed"
	again, _ := c.Lookup("file")
	assert.Equal(t, "file", again.Name, "Lookup exposes the catalogue's entry")
	for _, name := range []string{"group", "stage", "skipped"} {
		k, _ := c.Lookup(name)
		assert.True(t, k.Structural, "%s is not structural", name)
	}
}

func TestSuggest(t *testing.T) {
	c := Builtin()
	tests := map[string]string{
		"Fiel":        "file",
		"files":       "file",
		"direcotry":   "directory",
		"dir":         "",
		"exce":        "exec",
		"htp":         "http",
		"shel":        "shell",
		"upload-file": "upload_file",
		"uploadfile":  "upload_file",
		"puppett":     "puppet",
		"kubernetes":  "",
		"":            "",
	}
	for in, want := range tests {
		got := c.Suggest(in)
		assert.Equal(t, want, got, "Suggest(%q) = %q, want %q", in, got, want)
	}
}

func TestAttrKind(t *testing.T) {
	c := Builtin()
	tests := []struct {
		kind, attr string
		want       AttrKind
	}{
		{"file", "path", Namevar},
		{"file", "checksum", ReadOnly},
		{"file", "size", ReadOnly},
		{"file", "content", Property},
		{"file", "vars", Parameter},
		{"File", "mode", Property},
		{"directory", "path", Namevar},
		{"exec", "command", Parameter},
		{"exec", "timeout", Parameter},
		{"shell", "timeout", Parameter},
		{"http", "body", Property},
		{"http", "url", Parameter},
		{"http", "headers", Parameter},
		{"http", "idPointer", Parameter},
		{"http", "id", Parameter},
		{"external", "config", Property},
		{"external", "program", Parameter},
		{"file", "undeclared", Property},
		{"nope", "x", ""},
	}
	for _, tt := range tests {
		got := c.AttrKind(tt.kind, tt.attr)
		assert.Equal(t, tt.want, got, "AttrKind(%s, %s) = %q, want %q", tt.kind, tt.attr, got, tt.want)
	}
}

func TestAutoEdges(t *testing.T) {
	c := Builtin()
	file, _ := c.Lookup("file")
	dir, _ := c.Lookup("directory")
	exec, _ := c.Lookup("exec")
	require.Len(t, file.AutoEdges, 1, "file auto-edges")
	require.Equal(t, AutoEdge{Kind: "directory", From: "path", Attr: "path", Match: "parent-path"}, file.AutoEdges[0], "file auto-edges = %v", file.AutoEdges)
	require.Len(t, dir.AutoEdges, 1, "directory auto-edges")
	require.Equal(t, MatchParentPath, dir.AutoEdges[0].Match, "directory auto-edges = %v", dir.AutoEdges)
	require.Len(t, exec.AutoEdges, 2, "exec auto-edges")
	require.Equal(t, "cwd", exec.AutoEdges[0].From, "exec auto-edges = %v", exec.AutoEdges)
}

func TestTaskTypes(t *testing.T) {
	c := Builtin()
	// puppet apply --detailed-exitcodes: 0 unchanged, 2 changed, 4/6 failed.
	puppetReturns := []any{int64(0), int64(2)}
	puppetUnchanged := []any{int64(0)}
	tests := []struct {
		name     string
		taskType string
		params   map[string]any
		wantBase string
		wantSpec map[string]any
		wantMeta string
	}{
		{"shell", "shell", map[string]any{"cmd": "systemctl restart api", "cwd": "/srv", "timeout": 60, "retries": 3, "interval": 5},
			"exec", map[string]any{"command": "systemctl restart api", "cwd": "/srv", "timeout": 60}, "retry=3 delay=5s timeout="},
		{"shell with command", "shell", map[string]any{"command": "ls"},
			"exec", map[string]any{"command": "ls"}, "retry=0 delay= timeout="},
		{"upload_file", "upload_file", map[string]any{"path": "/etc/motd", "data": "hello", "timeout": 30},
			"file", map[string]any{"path": "/etc/motd", "content": "hello"}, "retry=0 delay= timeout=30s"},
		{"puppet", "puppet", map[string]any{"puppet_manifest": "/etc/puppet/modules/osnailyfacter/modular/netconfig/netconfig.pp", "puppet_modules": "/etc/puppet/modules", "timeout": 3600, "retries": 2},
			"exec", map[string]any{"command": "puppet apply --detailed-exitcodes --modulepath=/etc/puppet/modules /etc/puppet/modules/osnailyfacter/modular/netconfig/netconfig.pp", "timeout": 3600, "returns": puppetReturns, "unchangedReturns": puppetUnchanged}, "retry=2 delay= timeout="},
		{"puppet without modules, odd path quoted", "puppet", map[string]any{"puppet_manifest": "/srv/my site.pp"},
			"exec", map[string]any{"command": "puppet apply --detailed-exitcodes '/srv/my site.pp'", "returns": puppetReturns, "unchangedReturns": puppetUnchanged}, "retry=0 delay= timeout="},
		{"puppet manifest from env uses argv", "puppet", map[string]any{"puppet_manifest": envRef("M"), "puppet_modules": "/m"},
			"exec", map[string]any{"argv": []any{"puppet", "apply", "--detailed-exitcodes", "--modulepath=/m", envRef("M")}, "returns": puppetReturns, "unchangedReturns": puppetUnchanged}, "retry=0 delay= timeout="},
		{"a kind as task type", "exec", map[string]any{"command": "ls"},
			"exec", map[string]any{"command": "ls"}, "retry=0 delay= timeout="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := c.ValidateSpec(tt.taskType, tt.params)
			require.Empty(t, errs, "params invalid")
			base, spec, meta, err := c.TaskSpec(tt.taskType, tt.params)
			require.NoError(t, err)
			require.Equal(t, tt.wantBase, base, "TaskSpec = %s %#v, want %s %#v", base, spec, tt.wantBase, tt.wantSpec)
			require.Equal(t, tt.wantSpec, spec, "TaskSpec = %s %#v, want %s %#v", base, spec, tt.wantBase, tt.wantSpec)
			got := "retry=" + strconv.Itoa(meta.Retry) + " delay=" + meta.Delay + " timeout=" + meta.Timeout
			require.Equal(t, tt.wantMeta, got, "meta")
			// The mapped spec is valid for the base kind.
			errs = c.ValidateSpec(base, spec)
			require.Empty(t, errs, "mapped spec invalid for %s: %v", base, errs)
			bBase, bSpec, err := c.BaseSpec(tt.taskType, tt.params, nil)
			require.NoError(t, err, "BaseSpec = %s %v %v, want TaskSpec's result", bBase, bSpec, err)
			require.Equal(t, base, bBase, "BaseSpec = %s %v %v, want TaskSpec's result", bBase, bSpec, err)
			require.Equal(t, spec, bSpec, "BaseSpec = %s %v %v, want TaskSpec's result", bBase, bSpec, err)
		})
	}
	// Input parameters are not modified.
	params := map[string]any{"cmd": "ls", "retries": 1}
	_, _, _, err := c.TaskSpec("shell", params)
	require.NoError(t, err, "TaskSpec changed its input: %v", params)
	require.Equal(t, "ls", params["cmd"], "TaskSpec changed its input: %v", params)
	require.Equal(t, 1, params["retries"], "TaskSpec changed its input: %v", params)
	invalid := []struct {
		taskType string
		params   map[string]any
		want     []SpecError
	}{
		{"shell", map[string]any{"cmd": "ls", "command": "ls"}, []SpecError{{"spec.command", `set only one of "cmd", "command", "argv" (both "cmd" and "command" are set)`}}},
		{"shell", map[string]any{"cwd": "/"}, []SpecError{{"spec", `one of "cmd", "command", "argv" is required`}}},
		{"shell", map[string]any{"cmd": "ls", "intervl": 3}, []SpecError{{"spec.intervl", `unknown field "intervl"; did you mean "interval"?`}}},
		{"upload_file", map[string]any{"data": "x"}, []SpecError{{"spec.path", `missing required field "path"`}}},
		{"upload_file", map[string]any{"path": "/x", "data": "a", "content": "b"}, []SpecError{{"spec.content", `set only one of "data", "content", "contentBase64" (both "data" and "content" are set)`}}},
		{"puppet", map[string]any{"puppet_modules": "/m"}, []SpecError{{"spec.puppet_manifest", `missing required field "puppet_manifest"`}}},
		{"puppet", map[string]any{"puppet_manifest": "/m.pp", "puppet_modlues": "/m"}, []SpecError{{"spec.puppet_modlues", `unknown field "puppet_modlues"; did you mean "puppet_modules"?`}}},
	}
	for _, tt := range invalid {
		got := c.ValidateSpec(tt.taskType, tt.params)
		assert.Equal(t, tt.want, got, "ValidateSpec(%s, %v) = %v, want %v", tt.taskType, tt.params, got, tt.want)
	}
}

func TestBaseSpecOfBuiltinIsUnchanged(t *testing.T) {
	c := Builtin()
	spec := map[string]any{"path": "/x", "content": "y"}
	base, out, err := c.BaseSpec("File", spec, nil)
	require.NoError(t, err, "BaseSpec = %s %v %v", base, out, err)
	require.Equal(t, "file", base, "BaseSpec = %s %v %v", base, out, err)
	require.Equal(t, spec, out, "BaseSpec = %s %v %v", base, out, err)
	_, _, err = c.BaseSpec("Fiel", spec, nil)
	require.Error(t, err, "unknown kind")
	require.Contains(t, err.Error(), `did you mean "file"?`, "unknown kind err = %v", err)
}

func TestParseTimeout(t *testing.T) {
	tests := []struct {
		in      any
		want    time.Duration
		wantErr bool
	}{
		{60, time.Minute, false},
		{int64(2), 2 * time.Second, false},
		{1.5, 1500 * time.Millisecond, false},
		{"90s", 90 * time.Second, false},
		{"1m30s", 90 * time.Second, false},
		{"30", 30 * time.Second, false},
		{nil, 0, false},
		{"soon", 0, true},
		{-1, 0, true},
		{"-5s", 0, true},
		{true, 0, true},
	}
	for _, tt := range tests {
		got, err := ParseTimeout(tt.in)
		require.Equal(t, tt.wantErr, err != nil, "ParseTimeout(%v) = %v, %v; want %v, err=%v", tt.in, got, err, tt.want, tt.wantErr)
		assert.Equal(t, tt.want, got, "ParseTimeout(%v) = %v, %v; want %v, err=%v", tt.in, got, err, tt.want, tt.wantErr)
	}
}

func TestBuiltinReturnsIndependentCatalogues(t *testing.T) {
	a := Builtin()
	require.NoError(t, a.Add(Kind{Name: "Label", Base: "http", Defaults: map[string]any{"url": "http://x", "path": "/l"}, Wrap: "body"}))
	_, ok := Builtin().Lookup("Label")
	require.False(t, ok, "Add on one catalogue leaked into Builtin")
	clone := a.Clone()
	require.NoError(t, clone.Add(Kind{Name: "Bucket", Base: "http", Defaults: map[string]any{"url": "http://x", "path": "/b"}, Wrap: "body"}))
	_, ok = a.Lookup("Bucket")
	require.False(t, ok, "Add on a clone leaked into the original")
	_, ok = clone.Lookup("label")
	require.True(t, ok, "clone lost a kind")
}

func BenchmarkValidateSpec(b *testing.B) {
	c := Builtin()
	spec := map[string]any{
		"url": envRef("PLATFORM_URL"), "path": "/api/v2/labels", "body": map[string]any{"name": "x", "properties": map[string]any{"color": "#fff"}},
		"headers": map[string]any{"Authorization": secretRef("token")}, "expect": map[string]any{"create": []any{201}},
	}
	b.ReportAllocs()
	for b.Loop() {
		errs := c.ValidateSpec("http", spec)
		require.Empty(b, errs)
	}
}

func BenchmarkBuiltin(b *testing.B) {
	for b.Loop() {
		Builtin()
	}
}

// A shared catalogue is read by many goroutines at once (run with -race).
func TestConcurrentValidation(t *testing.T) {
	c := Builtin()
	done := make(chan []SpecError)
	for i := 0; i < 8; i++ {
		go func() {
			var last []SpecError
			for j := 0; j < 50; j++ {
				last = c.ValidateSpec("file", map[string]any{"path": "/x", "mode": true, "contnet": "a"})
				c.Lookup("shell")
				c.Suggest("fiel")
			}
			done <- last
		}()
	}
	for i := 0; i < 8; i++ {
		errs := <-done
		require.Len(t, errs, 2)
	}
}
