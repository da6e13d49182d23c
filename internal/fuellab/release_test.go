package fuellab

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
)

// fuelLibraryDir is fuel-library's task files beside the repository.
const fuelLibraryDir = "../../../shared/testdata/fuel-library"

// dirDigest is every file's name, mode, time and content under dir.
func dirDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = string(h[:])
		}
		out[p] = fi.Mode().String() + fi.ModTime().String() + sum
		return nil
	}))
	return out
}

func TestReleaseGivesEveryCommandTheCallersCommand(t *testing.T) {
	if _, err := os.Stat(fuelLibraryDir); err != nil {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("fuel-library task files are required here: %v", err)
		}
		t.Skipf("fuel-library task files unavailable: %v", err)
	}
	for _, tc := range []struct {
		name string
		cmd  func(task string) string
	}{
		{"trivial", Trivial},
		{"named after the task", func(task string) string { return "echo " + task + " >> runs.log" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := dirDigest(t, fuelLibraryDir)
			rel, err := ReadRelease(fuelLibraryDir, tc.cmd)
			require.NoError(t, err)
			assert.Equal(t, before, dirDigest(t, fuelLibraryDir), "the source directory is read, never written")

			assert.Equal(t, 204, rel.Tasks, "fuel-library's release graph")
			var tasks []map[string]any
			require.NoError(t, yaml.Unmarshal(rel.YAML, &tasks), "no duplicate keys left")
			require.Len(t, tasks, 204)
			types := map[string]int{}
			for _, task := range tasks {
				types[task["type"].(string)]++
				if task["type"] == "shell" {
					assert.Equal(t, map[string]any{"cmd": tc.cmd(task["id"].(string))}, task["parameters"], task["id"])
				}
				assert.NotContains(t, task, "test_pre", task["id"])
				assert.NotContains(t, task, "test_post", task["id"])
			}
			// 162 puppet, 9 shell, 6 copy_files, 5 upload_file and 1 sync
			// tasks are all shell now; stages, groups and skipped tasks stay.
			assert.Equal(t, map[string]int{"shell": 183, "stage": 6, "group": 11, "skipped": 4}, types)
			assert.Equal(t, 183, rel.Commands)

			cat, err := kinds.Builtin().WithHooks(kinds.Hooks()...)
			require.NoError(t, err)
			docs, err := graphs.Parse(graphs.Options{Catalogue: cat}, graphs.Source{Name: "fleet.yaml", Data: rel.YAML})
			require.NoError(t, err, "Cairn reads the rewritten graph")
			require.Len(t, docs.Graphs, 1)
			assert.Len(t, docs.Graphs[0].Tasks, 204)
			for _, task := range docs.Graphs[0].Tasks {
				assert.NotContains(t, []string{"puppet", "copy_files", "upload_file", "sync"}, string(task.Type), task.ID)
			}
		})
	}
}

func TestReleaseWithoutFilesFails(t *testing.T) {
	_, err := ReadRelease(t.TempDir(), Trivial)
	assert.ErrorContains(t, err, "no deployment_*.yaml")
}
