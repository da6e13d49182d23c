package graphs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets this test binary serve as the sandboxed Jsonnet child that
// JsonnetProcess starts (the cairn binary does the same in its main).
func TestMain(m *testing.M) {
	ServeJsonnetChild()
	os.Exit(m.Run())
}

func TestJsonnetDocuments(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lib"), 0o755))
	files := map[string]string{
		"lib/dir.libsonnet":  `function(name, path) { kind: 'directory', metadata: { name: name }, spec: { path: path } }`,
		"lib/uses.libsonnet": `import 'dir.libsonnet'`, // relative to lib/
		"motd.txt":           "hello",
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link.txt")))

	tests := []struct {
		name    string
		opts    Options
		src     string
		want    []string // errors; nil = valid
		wantRes string   // first resource's name when valid
	}{
		{"ext vars", Options{ExtVars: map[string]string{"name": "from-ext"}},
			`{kind: 'directory', metadata: {name: std.extVar('name')}, spec: {path: '/x'}}`, nil, "from-ext"},
		{"an array of documents", Options{},
			`[{kind: 'directory', metadata: {name: 'a'}, spec: {path: '/a'}}, {kind: 'directory', metadata: {name: 'b'}, spec: {path: '/b'}}]`, nil, "a"},
		{"errors have paths, not lines (the JSON is not what was written)", Options{},
			`[{kind: 'directory', metadata: {name: 'a'}, spec: {path: 7}}]`,
			[]string{`p.jsonnet: spec.path: expected string, got number`}, ""},
		{"syntax error", Options{}, "{\n  a: 1,\n  b: ,\n}",
			[]string{`p.jsonnet:3:6: jsonnet: Unexpected: "," while parsing terminal`}, ""},
		{"runtime error", Options{}, "local x = 1;\n{ a: error 'boom %d' % x }",
			[]string{`p.jsonnet:2:6: jsonnet: boom 1`}, ""},
		{"missing ext var", Options{}, `std.extVar('nope')`,
			[]string{`p.jsonnet:1:1: jsonnet: Undefined external variable: nope`}, ""},
		{"infinite recursion", Options{}, "local f(x) = f(x + 1);\nf(0)",
			[]string{`p.jsonnet:1:14: jsonnet: max stack frames exceeded.`}, ""},
		{"imports refused without an import directory", Options{}, `import 'lib/dir.libsonnet'`,
			[]string{`p.jsonnet:1:1: jsonnet: imports are not allowed: the document must be self-contained (import "lib/dir.libsonnet")`}, ""},
		{"imports inside the import directory", Options{ImportDir: dir},
			`(import 'lib/uses.libsonnet')('d', std.rstripChars(importstr 'motd.txt', '\n'))`, nil, "d"},
		{"import leaving the directory", Options{ImportDir: dir}, `import '../x.jsonnet'`,
			[]string{`p.jsonnet:1:1: jsonnet: import "../x.jsonnet": leaves the import directory`}, ""},
		{"absolute import", Options{ImportDir: dir}, `importstr '/etc/passwd'`,
			[]string{`p.jsonnet:1:1: jsonnet: import "/etc/passwd": only paths relative to the import directory are allowed`}, ""},
		{"symbolic link out of the directory", Options{ImportDir: dir}, `importstr 'link.txt'`,
			[]string{`p.jsonnet:1:1: jsonnet: import "link.txt": path escapes from parent`}, ""},
		{"output larger than the limit", Options{MaxBytes: 64 << 10},
			`{kind: 'stage', metadata: {name: 'big'}, spec: {s: std.join('', std.makeArray(100000, function(i) 'x'))}}`,
			[]string{`p.jsonnet: jsonnet: evaluated JSON is 97.8 KiB, larger than the limit of 64 KiB`}, ""},
		{"tailstrict is refused in process", Options{}, "local f(x) = f(x) tailstrict;\nf(1)",
			[]string{`p.jsonnet:1:19: jsonnet: tailstrict is not supported`}, ""},
		{"brackets nested too deeply", Options{MaxDepth: 10}, strings.Repeat("[", 11) + strings.Repeat("]", 11),
			[]string{`p.jsonnet:1:11: jsonnet: brackets are nested more than 10 levels deep`}, ""},
		{"evaluation past the deadline", Options{Timeout: 20 * time.Millisecond},
			`std.foldl(function(a, b) a + b, std.range(1, 300000), 0)`,
			[]string{`p.jsonnet: jsonnet: evaluation took longer than 20ms`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Parse(tt.opts, Source{Name: "p.jsonnet", Data: []byte(tt.src)})
			got := parseErrLines(t, err)
			if tt.name == "evaluation past the deadline" && len(got) == 1 {
				got[0] = got[0][:strings.Index(got[0], " (after")]
			}
			sameLines(t, got, tt.want)
			if tt.want == nil {
				require.NotEmpty(t, docs.Package.Resources, "resources = %+v", docs.Package.Resources)
				assert.Equal(t, tt.wantRes, docs.Package.Resources[0].Name, "resources = %+v", docs.Package.Resources)
			}
		})
	}
}

// Sandboxed evaluation runs each program in a child process (this test
// binary, see TestMain) that cannot take the parent down.
func TestJsonnetProcess(t *testing.T) {
	sandbox := JsonnetProcess{Path: os.Args[0], MaxMemory: 256 << 20}
	tests := []struct {
		name   string
		opts   Options
		src    string
		wantIn string // "" = valid
	}{
		{"valid", Options{ExtVars: map[string]string{"n": "sandboxed"}},
			`{kind: 'directory', metadata: {name: std.extVar('n')}, spec: {path: '/x'}}`, ""},
		{"program error with position", Options{}, "{\n a: error 'boom'\n}", "p.jsonnet:2:5: jsonnet: boom"},
		{"imports refused", Options{}, `import 'x.libsonnet'`, "imports are not allowed"},
		{"endless tailstrict loop hits the child's stack limit", Options{},
			"local f(x) = f(x) tailstrict;\nf(1)", "jsonnet: jsonnet evaluation failed: exceeded the stack limit (recursion too deep)"},
		{"memory bomb hits the child's memory limit", Options{Timeout: 2 * time.Minute},
			"local double(s, n) = if n == 0 then s else double(s + s, n - 1);\nstd.length(double('x', 40))",
			"jsonnet: jsonnet evaluation failed: exceeded the memory limit"},
		{"a long evaluation is killed at the deadline", Options{Timeout: 100 * time.Millisecond},
			`std.foldl(function(a, b) a + b, std.range(1, 1000000), 0)`, "jsonnet: evaluation took longer than 100ms"},
		{"output larger than the limit", Options{MaxBytes: 64 << 10},
			`{s: std.join('', std.makeArray(100000, function(i) 'x'))}`, "larger than the limit of 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Jsonnet = sandbox
			docs, err := Parse(opts, Source{Name: "p.jsonnet", Data: []byte(tt.src)})
			if tt.wantIn == "" {
				require.NoError(t, err)
				require.Len(t, docs.Package.Resources, 1, "resources")
				require.Equal(t, "sandboxed", docs.Package.Resources[0].Name, "resources = %+v", docs.Package.Resources)
				return
			}
			require.Error(t, err, "error = %v, want one containing %q", err, tt.wantIn)
			require.Contains(t, err.Error(), tt.wantIn, "error = %v, want one containing %q", err, tt.wantIn)
		})
	}
}

// A sandbox executable that does not serve evaluation is recognised, not
// its output taken for JSON.
func TestJsonnetProcessNotServing(t *testing.T) {
	_, err := Parse(Options{Jsonnet: JsonnetProcess{Path: "/bin/echo", Args: []string{"{}"}}},
		Source{Name: "p.jsonnet", Data: []byte("{}")})
	require.Error(t, err)
	require.Contains(t, err.Error(), "/bin/echo does not serve Jsonnet evaluation (its main must call graphs.ServeJsonnetChild first)", "error = %v", err)
}

func TestCheckJsonnetSource(t *testing.T) {
	tests := []struct {
		src  string
		ok   bool
		line int
	}{
		{`{a: "[[[[[[", b: '((((((', c: @"{{{{{{""", d: |||` + "\n  [[[[[[\n|||}", true, 0},
		{"// [[[[[[\n# ((((((\n/* {{{{{{ */ 1", true, 0},
		{"{ local tailstrictly = 1, a: tailstrictly }", true, 0},
		{`"tailstrict"`, true, 0},
		{"[[[[[[\n]]]]]]", false, 1},
		{"1 +\n  f(x) tailstrict", false, 2},
	}
	for _, tt := range tests {
		err := checkJsonnetSource("x", tt.src, 5, false)
		if !assert.Equal(t, tt.ok, err == nil, "%q: err = %v", tt.src, err) {
			continue
		}
		je, isJE := err.(*JsonnetError)
		if err != nil {
			require.True(t, isJE, "%q: err = %#v, want line %d", tt.src, err, tt.line)
			assert.Equal(t, tt.line, je.Line, "%q: err = %#v, want line %d", tt.src, err, tt.line)
		}
	}
}
