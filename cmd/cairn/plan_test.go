package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// sitePackage is a directory and a file in it, under root.
func sitePackage(root, content string) string {
	return `apiVersion: cairn/v1
kind: Directory
metadata: {name: site}
spec: {path: ` + root + `/site}
---
apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec:
  path: ` + root + `/site/motd
  content: ` + content + `
dependsOn: [Directory/site]
`
}

func TestPlan(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "tok"})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("site.yaml", sitePackage(root, "hello"))

	t.Run("new package", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			code int
		}{
			{"detailed exit code: changes", []string{"--detailed-exitcode"}, 2},
			{"without detailed exit code", nil, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.run(append([]string{"plan", "--stack", "web", pkg}, tt.args...)...).expect(t, tt.code)
				r.has(t, "Cairn will perform the following actions:",
					"+ directory/site will be created", "+ file/motd will be created",
					`+ content = "{sha256}`, `+ path    = "`+root+`/site/motd"`,
					"Plan: 2 to create, 0 to update, 0 to delete, 0 to run, 0 unchanged.")
				require.False(t, ansi(r.stdout), "colours on a pipe:\n%q", r.stdout)
			})
		}
		// A plan changes nothing.
		_, err := os.Stat(root + "/site")
		require.True(t, os.IsNotExist(err), "plan created %s: %v", root, err)
	})

	s.run("apply", "--stack", id, pkg).expect(t, 0)

	t.Run("no changes", func(t *testing.T) {
		s.run("plan", "--stack", id, pkg, "--detailed-exitcode").expect(t, 0).
			has(t, "No changes. The stack matches the package (2 resources unchanged).")
	})

	t.Run("update", func(t *testing.T) {
		changed := s.file("site2.yaml", sitePackage(root, "bonjour"))
		s.run("plan", "--stack", id, changed, "--detailed-exitcode").expect(t, 2).
			has(t, "~ file/motd will be updated", `~ content = "{sha256}2cf24dba`, `" → "{sha256}`, "Plan: 0 to create, 1 to update, 0 to delete, 0 to run, 1 unchanged.")
	})

	t.Run("refresh", func(t *testing.T) {
		restart := "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: restart}\n" +
			"spec: {command: \"echo restart >> " + root + "/restarts\", refreshOnly: true}\nsubscribe: [File/motd]\n"
		changed := s.file("site-refresh.yaml", sitePackage(root, "hej")+restart)
		s.run("plan", "--stack", id, changed, "--detailed-exitcode").expect(t, 2).
			has(t, "> exec/restart will run (refresh: a resource it subscribes to would change)",
				"Plan: 0 to create, 1 to update, 0 to delete, 1 to run (1 refreshed), 1 unchanged.")
		same := s.file("site-same.yaml", sitePackage(root, "hello")+restart)
		r := s.run("plan", "--stack", id, same, "--detailed-exitcode").expect(t, 0)
		r.has(t, "No changes.")
		if strings.Contains(r.stdout, "refresh") {
			t.Fatalf("nothing changes, yet a refresh:\n%s", r.stdout)
		}
	})

	t.Run("delete", func(t *testing.T) {
		onlyDir := s.file("dir-only.yaml", strings.SplitN(sitePackage(root, "x"), "---", 2)[0])
		s.run("plan", "--stack", id, onlyDir, "--detailed-exitcode").expect(t, 2).
			has(t, "- file/motd will be deleted", `- content = "{sha256}2cf24dba`, "1 to delete")
	})

	t.Run("formats", func(t *testing.T) {
		changed := s.file("site3.yaml", sitePackage(root, "hallo"))
		out := s.run("plan", "--stack", id, changed, "-o", "json", "--detailed-exitcode").expect(t, 2).stdout
		var plan model.DryRun
		err := json.Unmarshal([]byte(out), &plan)
		require.NoError(t, err, "-o json: %v\n%s", err, out)
		require.Equal(t, 1, plan.Summary.Update, "plan summary = %+v", plan.Summary)
		require.Equal(t, 1, plan.Summary.Noop, "plan summary = %+v", plan.Summary)
		require.NotEmpty(t, plan.ExecutionID, "plan summary = %+v", plan.Summary)
		out = s.run("plan", "--stack", id, changed, "-o", "yaml").expect(t, 0).stdout
		var y struct {
			Summary struct{ Update int } `yaml:"summary"`
			Diff    []struct {
				ID     string `yaml:"id"`
				Action string `yaml:"action"`
			} `yaml:"diff"`
		}
		err = yaml.Unmarshal([]byte(out), &y)
		require.NoError(t, err, "-o yaml: %v\n%s", err, out)
		require.Equal(t, 1, y.Summary.Update, "-o yaml: %v\n%s", err, out)
		require.Len(t, y.Diff, 2, "-o yaml: %v\n%s", err, out)
	})

	t.Run("failure", func(t *testing.T) {
		// A step that cannot be planned fails the plan, even with changes.
		unplannable := s.file("unplannable.yaml", "apiVersion: cairn/v1\nkind: File\nmetadata: {name: x}\nspec: {path: relative/path}\n")
		s.run("plan", "--stack", id, unplannable, "--detailed-exitcode").expect(t, 1).
			has(t, "Error: file/x:", "must be absolute", "2 to delete")
		invalid := s.file("invalid.yaml", "apiVersion: cairn/v1\nkind: Fiel\nmetadata: {name: x}\nspec: {}\n")
		s.run("plan", "--stack", id, invalid, "--detailed-exitcode").expect(t, 1).hasErr(t, invalid+":2:7: kind:", "422")
		s.run("plan", "--stack", "no-such-stack", pkg, "--detailed-exitcode").expect(t, 1).hasErr(t, "404")
		s.run("plan", pkg).expect(t, 1).hasErr(t, `required flag(s) "stack" not set`)
	})

	t.Run("stack URLs when no files", func(t *testing.T) {
		// The stack has no URLs: the server says so.
		s.run("plan", "--stack", id).expect(t, 1).hasErr(t, "no package")
	})
}

func TestPlanJsonnetImport(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	s.file("pkg/lib/files.libsonnet", `{
  file(name, path, content):: {apiVersion: 'cairn/v1', kind: 'File', metadata: {name: name}, spec: {path: path, content: content}},
}
`)
	main := s.file("pkg/main.jsonnet", `local files = import 'lib/files.libsonnet';
[files.file('motd', std.extVar('root') + '/motd', 'from jsonnet')]
`)
	s.run("plan", "--stack", id, main, "--ext-var", "root="+root, "--detailed-exitcode").expect(t, 2).
		has(t, "+ file/motd will be created", `+ content = "{sha256}`)
	s.run("apply", "--stack", id, main, "--ext-var", "root="+root).expect(t, 0)
	got := readFile(t, root+"/motd")
	require.Equal(t, "from jsonnet", got, "motd")
	// Evaluation errors are reported here, with the file's position.
	broken := s.file("pkg/broken.jsonnet", "local files = import 'lib/files.libsonnet';\n[files.nope]\n")
	s.run("plan", "--stack", id, broken).expect(t, 1).hasErr(t, broken+":2:", "Jsonnet did not evaluate")
}
