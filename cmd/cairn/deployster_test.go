package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedSorting and seedExpression are the two example manifests of
// Deployster's "Deployment lifecycle & resource protocol" document, as
// written there (trailing spaces included).
const seedSorting = `resources:
  
  my_data_disk:
    type: acme/deployster-gcp-disk
    config:
      name: www_data_disk
      size: '200gb'

  www_vm:
    type: acme/deployster-gcp-vm
    dependencies:    
      disk: my_data_disk
    config:
      name: www_vm
      machine-type: n1-standard-4
`

const seedExpression = `resources:
  
  my_data_disk:
    type: acme/deployster-gcp-disk
    config:
      name: www_data_disk
      size: '200gb'

  www_vm:
    type: acme/deployster-gcp-vm
    dependencies:    
      disk: my_data_disk
    config:
      name: www_vm
      zone: '{{ www_data_disk.state.zone }}'
      machine-type: n1-standard-4
`

// deploysterTypes makes the seed's resource types runnable: Deployster
// runs a type as a Docker image, and so does Cairn (external, image:
// TYPE). This machine has no Docker daemon, so a docker on PATH runs
// each image as the cloudsim program, which plays both types in dir.
func deploysterTypes(t *testing.T, dir string) {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "cloudsim"), "./testdata/deployster/cloudsim")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	docker := fmt.Sprintf(`#!/bin/sh
[ "$1" = run ] && [ "$2" = -i ] && [ "$3" = --rm ] || { echo "unexpected docker call: $*" >&2; exit 125; }
shift 3
while [ $# -gt 0 ]; do
  case "$1" in
    -e|-v|--volume|--entrypoint) shift 2 ;;
    *) break ;;
  esac
done
case "$1" in
  acme/deployster-gcp-disk|acme/deployster-gcp-vm) ;;
  *) echo "Unable to find image '$1' locally" >&2; exit 125 ;;
esac
shift
exec env CLOUDSIM_DIR=%q CLOUDSIM_ZONE=europe-west1-b %q "$@"
`, dir, filepath.Join(bin, "cloudsim"))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "docker"), []byte(docker), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

// TestDeploysterSeedManifests validates and applies Deployster's own
// example manifests unchanged: resources in dependency order, a
// dependency's state in an expression by its alias, auto-variables files.
func TestDeploysterSeedManifests(t *testing.T) {
	cloud := t.TempDir()
	deploysterTypes(t, cloud)
	t.Setenv("HOME", t.TempDir())
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("infra")

	t.Run("resource sorting example", func(t *testing.T) {
		file := s.file("sorting.yaml", seedSorting)
		runCairn(t, "validate", file).expect(t, 0).has(t, "1 file: 2 resources: valid")
		s.run("apply", "--stack", id, file, "--detailed-exitcode").expect(t, 2)
		assert.Equal(t, map[string]any{"name": "www_data_disk", "size": "200gb", "zone": "europe-west1-b"}, readJSONFile(t, filepath.Join(cloud, "www_data_disk.json")))
		assert.Equal(t, map[string]any{"name": "www_vm", "machine-type": "n1-standard-4"}, readJSONFile(t, filepath.Join(cloud, "www_vm.json")))
		s.run("apply", "--stack", id, file, "--detailed-exitcode").expect(t, 0)
	})

	t.Run("expression example names no alias", func(t *testing.T) {
		// The seed's expression names www_data_disk, the disk's config
		// name; Deployster's context has the alias (disk) and the
		// variables only, so Deployster refuses it as undefined, and so
		// does Cairn: it reads as a variable no one gave.
		file := s.file("expression.yaml", seedExpression)
		runCairn(t, "validate", file).expect(t, 0).has(t, "variables without a value", "www_data_disk")
		s.run("apply", "--stack", id, file).expect(t, 1).hasErr(t, "www_data_disk")
	})

	t.Run("a dependency's state by its alias", func(t *testing.T) {
		file := s.file("alias.yaml", strings.Replace(seedExpression, "www_data_disk.state.zone", "disk.state.zone", 1))
		runCairn(t, "validate", file).expect(t, 0).has(t, "1 file: 2 resources: valid")
		s.run("apply", "--stack", id, file, "--detailed-exitcode").expect(t, 2)
		assert.Equal(t, "europe-west1-b", readJSONFile(t, filepath.Join(cloud, "www_vm.json"))["zone"], "the VM's zone is the disk's, from its state")
	})

	t.Run("auto-variables files", func(t *testing.T) {
		work := t.TempDir()
		t.Chdir(work)
		home := os.Getenv("HOME")
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".deployster"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".deployster", "vars.auto.yaml"), []byte("machine: n1-standard-1\nsize: 100gb\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(work, "vars.auto.yaml"), []byte("machine: n1-standard-2\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(work, "vars.disk.auto.yaml"), []byte("disk_size: '{{ size }}'\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(work, "vars.txt"), []byte("not: read\n"), 0o644))
		manifest := strings.NewReplacer("'200gb'", "'{{ disk_size }}'", "n1-standard-4", "'{{ machine }}'", "www_data_disk.state.zone", "disk.state.zone").Replace(seedExpression)
		file := s.file("auto.yaml", manifest)
		runCairn(t, "validate", file).expect(t, 0).has(t, "1 file: 2 resources: valid")
		s.run("apply", "--stack", id, file).expect(t, 0)
		assert.Equal(t, "n1-standard-2", readJSONFile(t, filepath.Join(cloud, "www_vm.json"))["machine-type"], "the working directory's file is read after ~/.deployster's")
		assert.Equal(t, "100gb", readJSONFile(t, filepath.Join(cloud, "www_data_disk.json"))["size"], "a file reads the variables of the files before it")
		s.run("apply", "--stack", id, file, "--var", "machine=n1-highmem-2").expect(t, 0)
		assert.Equal(t, "n1-highmem-2", readJSONFile(t, filepath.Join(cloud, "www_vm.json"))["machine-type"], "--var wins over the auto-variables files")
	})
}

func TestDeploysterAutoVars(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // dir "a" or "b" / name → content
		want    map[string]any
		wantErr string
	}{
		{"none", nil, map[string]any{}, ""},
		{"order and deep merge", map[string]string{
			"a/vars.auto.yaml":      "db: {host: a, port: 5432}\nregion: eu\n",
			"b/vars.auto.yaml":      "db: {host: b}\n",
			"b/vars.x.y.auto.yaml":  "zone: '{{ region }}-1'\nhost: '{{ db.host }}'\n",
			"b/vars.yaml":           "ignored: true\n",
			"b/vars.auto.yaml.orig": "ignored: true\n",
		}, map[string]any{"db": map[string]any{"host": "b", "port": 5432}, "region": "eu", "zone": "eu-1", "host": "b"}, ""},
		{"undefined", map[string]string{"a/vars.auto.yaml": "zone: '{{ region }}'\n"}, nil, `"region" is undefined`},
		{"filters are Jinja's", map[string]string{"a/vars.auto.yaml": "x: 1\n", "b/vars.auto.yaml": "zone: '{{ x | default(2) }}'\n"}, nil, "only a variable's name or dotted path"},
		{"not YAML", map[string]string{"a/vars.auto.yaml": "a: [\n"}, nil, "vars.auto.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"a", "b"} {
				require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
			}
			for name, content := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
			}
			got, _, err := deploysterAutoVars(filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "missing"))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
