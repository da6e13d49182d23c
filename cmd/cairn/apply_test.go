package main

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// failingPackage creates a directory and a file, then runs a command that
// fails: the apply rolls back both.
func failingPackage(root string) string {
	return sitePackage(root, "hello") + `---
apiVersion: cairn/v1
kind: Exec
metadata: {name: boom}
spec: {command: "echo broken >&2; exit 3"}
dependsOn: [File/motd]
`
}

func TestApply(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "tok"})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("site.yaml", sitePackage(root, "hello"))

	t.Run("progress to completion", func(t *testing.T) {
		r := s.run("apply", "--stack", "web", pkg, "--detailed-exitcode").expect(t, 2)
		// A line per step with the progress bar, in dependency order.
		bar := regexp.MustCompile(`(?m)^\[=+>? *\] ([12])/2 (created|unchanged) (directory/site|file/motd)`)
		lines := bar.FindAllStringSubmatch(r.stdout, -1)
		require.Len(t, lines, 2, "progress lines = %q\n%s", lines, r.stdout)
		require.Equal(t, "directory/site", lines[0][3], "progress lines = %q\n%s", lines, r.stdout)
		require.Equal(t, "2", lines[1][1], "progress lines = %q\n%s", lines, r.stdout)
		require.Equal(t, "file/motd", lines[1][3], "progress lines = %q\n%s", lines, r.stdout)
		r.has(t, "[========================] 2/2 created file/motd", "Apply completed in", "(execution stack-")
		report := regexp.MustCompile(`(?m)^\s+created:\s+2$`)
		require.True(t, report.MatchString(r.stdout), "no Puppet-style report:\n%s", r.stdout)
		require.True(t, regexp.MustCompile(`(?m)^\s+failed:\s+0$`).MatchString(r.stdout), "no Puppet-style report:\n%s", r.stdout)
		got := readFile(t, root+"/site/motd")
		require.Equal(t, "hello", got, "motd")
	})

	t.Run("reapply changes nothing", func(t *testing.T) {
		r := s.run("apply", "--stack", id, pkg, "--detailed-exitcode").expect(t, 0)
		r.has(t, "unchanged directory/site", "unchanged file/motd")
		require.True(t, regexp.MustCompile(`(?m)^\s+unchanged:\s+2$`).MatchString(r.stdout), "report:\n%s", r.stdout)
	})

	t.Run("json output", func(t *testing.T) {
		changed := s.file("site2.yaml", sitePackage(root, "bonjour"))
		r := s.run("apply", "--stack", id, changed, "-o", "json").expect(t, 0)
		var ex model.Execution
		err := json.Unmarshal([]byte(r.stdout), &ex)
		require.NoError(t, err, "-o json is not one execution: %v\n%s", err, r.stdout)
		require.Equal(t, model.ExecCompleted, ex.Status, "execution = %+v report %+v", ex, ex.Report)
		require.NotNil(t, ex.Report, "execution = %+v report %+v", ex, ex.Report)
		require.Equal(t, 1, ex.Report.Updated, "execution = %+v report %+v", ex, ex.Report)
		require.Equal(t, 1, ex.Report.Unchanged, "execution = %+v report %+v", ex, ex.Report)
		// The progress went to stderr.
		r.hasErr(t, "updated file/motd")
		got := readFile(t, root+"/site/motd")
		require.Equal(t, "bonjour", got, "motd")
	})

	t.Run("wait=false", func(t *testing.T) {
		again := s.file("site3.yaml", sitePackage(root, "hola"))
		r := s.run("apply", "--stack", id, again, "--wait=false").expect(t, 0)
		exID := strings.TrimSpace(r.stdout)
		require.NotContains(t, exID, "\n", "--wait=false should print the execution id alone:\n%s", r.stdout)
		require.True(t, strings.HasPrefix(exID, "stack-"+id), "--wait=false should print the execution id alone:\n%s", r.stdout)
		r.hasErr(t, "cairn exec watch "+exID)
		done := s.waitExecution(exID, "finished", (*model.Execution).Finished)
		require.Equal(t, model.ExecCompleted, done.Status, "execution %s: %s %q", exID, done.Status, done.Error)
		require.Equal(t, "hola", readFile(t, root+"/site/motd"), "execution %s: %s %q", exID, done.Status, done.Error)
		// -o yaml prints the started execution.
		yet := s.file("site4.yaml", sitePackage(root, "ciao"))
		out := s.run("apply", "--stack", id, yet, "--wait=false", "-o", "yaml").expect(t, 0).stdout
		var ex struct {
			ID     string `yaml:"id"`
			Kind   string `yaml:"kind"`
			Status string `yaml:"status"`
		}
		err := yaml.Unmarshal([]byte(out), &ex)
		require.NoError(t, err, "-o yaml: %v\n%s", err, out)
		require.Equal(t, "apply", ex.Kind, "-o yaml: %v\n%s", err, out)
		require.Equal(t, "running", ex.Status, "-o yaml: %v\n%s", err, out)
		s.waitExecution(ex.ID, "finished", (*model.Execution).Finished)
	})

	t.Run("failure rolls back", func(t *testing.T) {
		other := s.stack("broken")
		broken := s.path("broken")
		require.NoError(t, os.Mkdir(broken, 0o755))
		bad := s.file("failing.yaml", failingPackage(broken))
		r := s.run("apply", "--stack", other, bad).expect(t, 1)
		r.has(t, "3/3 failed exec/boom: run: exited 3",
			"rolled back file/motd", "rolled back directory/site",
			"Apply failed and was rolled back", "Failures:", "exec/boom:")
		require.True(t, regexp.MustCompile(`(?m)^\s+failed:\s+1$`).MatchString(r.stdout), "report:\n%s", r.stdout)
		_, err := os.Stat(broken + "/site")
		require.True(t, os.IsNotExist(err), "rollback left %s/site: %v", broken, err)
	})

	t.Run("conflict", func(t *testing.T) {
		slow := s.file("slow.yaml", "apiVersion: cairn/v1\nkind: Exec\nmetadata: {name: nap}\nspec: {command: sleep 3}\n")
		first := strings.TrimSpace(s.run("apply", "--stack", id, slow, "--wait=false").expect(t, 0).stdout)
		s.run("apply", "--stack", id, slow).expect(t, 1).hasErr(t, "409", first)
		s.waitExecution(first, "finished", (*model.Execution).Finished)
	})
}

// TestApplyPollsWhenEventsFail puts a proxy in front of the API that
// refuses the event stream: apply must poll the execution instead and
// still show every step and the report.
func TestApplyPollsWhenEventsFail(t *testing.T) {
	noEvents := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				http.Error(w, "streaming is not allowed here", http.StatusBadGateway)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	s := newAPIServer(t, apiServerOptions{temporal: true, front: noEvents})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("site.yaml", sitePackage(root, "hello"))
	r := s.run("apply", "--stack", id, pkg, "--poll-interval", "100ms").expect(t, 0)
	r.hasErr(t, "polling instead", "502")
	r.has(t, "created directory/site", "2/2 created file/motd", "Apply completed")
	require.Equal(t, "hello", readFile(t, root+"/site/motd"), "motd not written")
}
