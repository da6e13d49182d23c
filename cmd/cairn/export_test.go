package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

func TestExportAndStackDelete(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	s.run("apply", "--stack", id, s.file("site.yaml", sitePackage(root, "hello"))).expect(t, 0)
	// Changed behind Cairn's back: the export shows the file as it is now.
	require.NoError(t, os.WriteFile(root+"/site/motd", []byte("edited"), 0o644))

	t.Run("export", func(t *testing.T) {
		y := s.run("export", "--stack", "web").expect(t, 0).stdout
		dec := yaml.NewDecoder(strings.NewReader(y))
		docs := map[string]map[string]any{}
		for {
			var d struct {
				Kind     string            `yaml:"kind"`
				Metadata map[string]string `yaml:"metadata"`
				Spec     map[string]any    `yaml:"spec"`
			}
			if err := dec.Decode(&d); err != nil {
				break
			}
			docs[d.Kind+"/"+d.Metadata["name"]] = d.Spec
		}
		require.Len(t, docs, 2, "export -o yaml = %v\n%s", docs, y)
		require.Equal(t, "edited", docs["file/motd"]["content"], "export -o yaml = %v\n%s", docs, y)

		j := s.run("export", "--stack", id, "-o", "json").expect(t, 0).stdout
		var arr []map[string]any
		err := json.Unmarshal([]byte(j), &arr)
		require.NoError(t, err, "export -o json: %v\n%s", err, j)
		require.Len(t, arr, 2, "export -o json: %v\n%s", err, j)

		s.run("export", "--stack", id, "-o", "table").expect(t, 0).has(t, "KIND", "NAME", "PATH", "motd", root+"/site/motd")

		// By kind, from the control plane's files.
		s.run("export", "--kind", "file", "--dir", root+"/site").expect(t, 0).has(t, "kind: file", "content: edited")

		// The exported package is a package: it validates offline.
		out := s.path("exported.yaml")
		s.run("export", "--stack", id, "--file", out).expect(t, 0)
		runCairn(t, "validate", out).expect(t, 0).has(t, "2 resources")

		s.run("export").expect(t, 1).hasErr(t, "give --stack, --label, --resource or --all, or --kind")
		s.run("export", "--kind", "fiel").expect(t, 1).hasErr(t, "422", `did you mean "file"`)
	})

	t.Run("delete", func(t *testing.T) {
		r := s.run("stack", "delete", "web").expect(t, 0)
		r.has(t, "deleted file/motd", "deleted directory/site", "Destroy completed")
		_, err := os.Stat(root + "/site")
		require.True(t, os.IsNotExist(err), "destroy left %s/site: %v", root, err)
		// The server removes the record after the destroy.
		s.waitUntil("stack record removed", func() bool {
			_, err := s.client.GetStack(s.ctx(), id)
			return client.IsStatus(err, 404)
		})
		s.run("stack", "show", id).expect(t, 1).hasErr(t, "404")

		// --wait=false prints the destroy's id.
		other := s.stack("db")
		r = s.run("stack", "delete", other, "--wait=false").expect(t, 0)
		exID := strings.TrimSpace(r.stdout)
		ex := s.waitExecution(exID, "finished", (*model.Execution).Finished)
		require.Equal(t, model.ExecDestroy, ex.Kind, "destroy %s: %s %s", exID, ex.Kind, ex.Status)
		require.Equal(t, model.ExecCompleted, ex.Status, "destroy %s: %s %s", exID, ex.Kind, ex.Status)
	})
}
