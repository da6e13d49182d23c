package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
)

// buildDeployster builds the test plugin of testdata/deployster.
func buildDeployster(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deployster")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/deployster").CombinedOutput()
	require.NoError(t, err, "building the plugin: %s", out)
	return bin
}

// deploysterPackage is Deployster's example: a disk, and a vm that
// depends on it under the alias disk, reads its zone and a variable, and
// is given a secret its create action prints.
const deploysterPackage = `kind: external
metadata: {name: data-disk}
spec:
  program: %[1]s
  config: {dir: %[2]s, size: 200}
---
kind: external
metadata: {name: www-vm}
spec:
  program: %[1]s
  dependencies: {disk: data-disk}
  config:
    dir: %[2]s
    zone: "{{ deps.disk.state.zone }}"
    region: "{{ .vars.region }}"
    password: "{{ secret \"VM_PASSWORD\" }}"
`

// TestDeploysterE2E applies a Deployster plugin's resources through the
// API on a dev server: the aliased dependency is applied first and its
// state reaches the dependent's config and request, vars and verbose
// come from the apply, and the actions' output is shown redacted.
func TestDeploysterE2E(t *testing.T) {
	bin := buildDeployster(t)
	h := newCairn(t, cairnOptions{sealKey: []byte("deployster-params-sealing-key-012")})
	ctx := ctxTimeout(t, 4*time.Minute)
	const secret = "vm-Pa55-7c1d9e"
	dir := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "deployster"})
	require.NoError(t, err)
	doc := &client.Document{Data: []byte(fmt.Sprintf(deploysterPackage, bin, dir)), Format: "yaml"}

	t.Run("a missing var is listed by dry-run and refused by apply", func(t *testing.T) {
		params := model.ApplyParams{Secrets: map[string]string{"VM_PASSWORD": secret}}
		plan, _, err := h.client.DryRun(ctx, st.ID, doc, client.DryRunOptions{Params: params})
		require.NoError(t, err)
		require.NotNil(t, plan)
		assert.Equal(t, []string{"region"}, plan.MissingVars)
		_, err = h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{Wait: true, Params: params})
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 422, apiErr.Status)
		require.NotEmpty(t, apiErr.Details)
		assert.Equal(t, "vars.region", apiErr.Details[0].Path)
		assert.NoFileExists(t, filepath.Join(dir, "data-disk.json"), "nothing applied")
	})

	ex, err := h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{Wait: true, Params: model.ApplyParams{
		Secrets: map[string]string{"VM_PASSWORD": secret}, Vars: map[string]any{"region": "europe-west1"}, Verbose: true}})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)

	t.Run("the dependent gets the aliased dependency's state and the var", func(t *testing.T) {
		var vm struct {
			Config map[string]any `json:"config"`
		}
		raw, err := os.ReadFile(filepath.Join(dir, "www-vm.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &vm))
		assert.Equal(t, "europe-west1-b", vm.Config["zone"])
		assert.Equal(t, "europe-west1", vm.Config["region"])
	})

	t.Run("the request carries the dependencies and verbose", func(t *testing.T) {
		reqs := readRequests(t, filepath.Join(dir, "www-vm.requests"))
		require.NotEmpty(t, reqs)
		for _, r := range reqs {
			assert.Equal(t, true, r["verbose"])
			deps, _ := r["dependencies"].(map[string]any)
			disk, _ := deps["disk"].(map[string]any)
			require.NotNil(t, disk, "request without the disk: %v", r)
			assert.Equal(t, "data-disk", disk["name"])
			assert.Equal(t, "external", disk["type"])
			assert.Equal(t, map[string]any{"id": "data-disk", "name": "data-disk", "zone": "europe-west1-b"}, disk["state"], "the state it was applied to, with its id")
		}
	})

	t.Run("the actions' output is shown, redacted", func(t *testing.T) {
		got, err := h.client.GetExecution(ctx, ex.ID)
		require.NoError(t, err)
		var output string
		for _, s := range got.Steps {
			if s.ID != "external/www-vm" {
				continue
			}
			for _, c := range s.Changes {
				if c.Path == "output" {
					output, _ = c.New.(string)
				}
			}
		}
		assert.Contains(t, output, "[create]")
		assert.Contains(t, output, "creating www-vm in europe-west1-b with password "+expr.Redacted)
		assert.Contains(t, output, "created www-vm (verbose true)")
		raw, err := json.Marshal(got)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), secret)
	})
}

func readRequests(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	return out
}

// TestDeploysterPrecheckE2E: one resource of many whose config breaks
// its plugin's config_schema (also where it holds an expression over a
// dependency, whose own value is judged only when it runs), or whose
// plugin requires a plug the server has not got, fails the apply before
// anything is applied, naming the resource and its line; an alias to no
// resource is refused at once.
func TestDeploysterPrecheckE2E(t *testing.T) {
	bin := buildDeployster(t)
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	res := func(name, program, config string) string {
		return fmt.Sprintf("kind: external\nmetadata: {name: %s}\nspec:\n  program: %s\n  config: %s\n", name, program, config)
	}
	cases := []struct {
		name, bad, want string
	}{
		{"config breaks the schema", res("c", bin, `{dir: %[1]s, size: big}`), "c: spec.config: does not match the config_schema"},
		{"a required plug is missing", res("c", "["+bin+", --plug]", `{dir: %[1]s}`), `requires plug "creds": CAIRN_PLUGS_DIR is not set`},
		{"a static field breaks the schema beside an expression", res("c", bin, "{dir: 7, size: \"{{ deps.disk.state.size }}\"}\n  dependencies: {disk: b}"), "c: spec.config: does not match the config_schema of " + bin + ": at /dir: got number, want string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pkg := strings.Join([]string{res("a", bin, "{dir: %[1]s}"), res("b", bin, "{dir: %[1]s, size: 1}"), tc.bad}, "---\n")
			st, err := h.client.CreateStack(ctx, model.StackInput{Name: "precheck-" + strings.ReplaceAll(tc.name, " ", "-")})
			require.NoError(t, err)
			ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(fmt.Sprintf(pkg, dir)), Format: "yaml"}, client.ApplyOptions{Wait: true})
			require.NoError(t, err)
			assert.NotEqual(t, model.ExecCompleted, ex.Status)
			assert.Contains(t, ex.Error, tc.want)
			assert.Contains(t, ex.Error, "nothing was applied")
			if strings.Contains(tc.bad, "{{") {
				assert.NotContains(t, ex.Error, "at /size", "an expression's value is judged when it runs")
			}
			assert.Regexp(t, `:13:\d+: external/c`, ex.Error, "names the resource's line")
			for _, n := range []string{"a", "b", "c"} {
				assert.NoFileExists(t, filepath.Join(dir, n+".json"))
			}
		})
	}

	t.Run("an alias to no resource is refused with its line", func(t *testing.T) {
		st, err := h.client.CreateStack(ctx, model.StackInput{Name: "alias"})
		require.NoError(t, err)
		pkg := fmt.Sprintf("kind: external\nmetadata: {name: vm}\nspec:\n  program: %s\n  dependencies: {disk: no-such-disk}\n  config: {dir: /tmp}\n", bin)
		_, err = h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg), Format: "yaml"}, client.ApplyOptions{Wait: true})
		var apiErr *client.APIError
		require.True(t, errors.As(err, &apiErr), "%v", err)
		assert.Equal(t, 422, apiErr.Status)
		require.NotEmpty(t, apiErr.Details)
		assert.Equal(t, "spec.dependencies.disk", apiErr.Details[0].Path)
		assert.Equal(t, 5, apiErr.Details[0].Line)
		assert.Contains(t, apiErr.Details[0].Message, "no-such-disk")
	})
}
