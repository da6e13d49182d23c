package providers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// fakePuppet puts a `puppet` program first on PATH that records its
// arguments in dir/args and exits with $PUPPET_EXIT, as
// `puppet apply --detailed-exitcodes` would.
func fakePuppet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, "args") + "\nexit \"${PUPPET_EXIT:-0}\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "puppet"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// convergePuppet runs a puppet task's parameters as the graph does: mapped
// onto exec by the catalogue, then converged.
func convergePuppet(t *testing.T, params map[string]any) (Change, error) {
	t.Helper()
	cat := kinds.Builtin()
	kind, spec, _, err := cat.TaskSpec(kinds.TaskPuppet, params)
	require.NoError(t, err)
	return fuelRegistry(nil).Converge(context.Background(), Request{Kind: kind, Name: "netconfig", Spec: spec})
}

func TestPuppetTaskOutcomeFollowsDetailedExitCodes(t *testing.T) {
	tests := []struct {
		name        string
		exit        string
		wantOutcome model.Outcome
		wantErr     string
	}{
		{"0: no changes", "0", model.OutcomeUnchanged, ""},
		{"2: changes", "2", model.OutcomeUpdated, ""},
		{"4: failures", "4", model.OutcomeFailed, "exited 4"},
		{"6: changes and failures", "6", model.OutcomeFailed, "exited 6"},
		{"1: puppet itself failed", "1", model.OutcomeFailed, "exited 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fakePuppet(t)
			ch, err := convergePuppet(t, map[string]any{
				"puppet_manifest": "/etc/puppet/manifests/site.pp",
				"puppet_modules":  "/etc/puppet/modules",
				"env":             map[string]any{"PUPPET_EXIT": tt.exit},
			})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantOutcome, ch.Outcome)
			assert.Equal(t, model.ActionRun, ch.Action)
			args, err := os.ReadFile(filepath.Join(dir, "args"))
			require.NoError(t, err)
			assert.Equal(t, "apply --detailed-exitcodes --modulepath=/etc/puppet/modules /etc/puppet/manifests/site.pp\n", string(args))
			if tt.wantOutcome == model.OutcomeUnchanged {
				assert.Contains(t, ch.Report, "changed nothing")
			}
		})
	}
}

func TestExecUnchangedReturns(t *testing.T) {
	tests := []struct {
		name        string
		spec        model.Spec
		wantOutcome model.Outcome
		wantChanged any
	}{
		{"without unchangedReturns a run is a change", model.Spec{"command": "true"}, model.OutcomeUpdated, nil},
		{"code in unchangedReturns", model.Spec{"command": "exit 3", "returns": []any{0, 3}, "unchangedReturns": 3}, model.OutcomeUnchanged, false},
		{"code not in unchangedReturns", model.Spec{"command": "true", "returns": []any{0, 3}, "unchangedReturns": []any{3}}, model.OutcomeUpdated, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := localRegistry(t).Converge(context.Background(), Request{Kind: "exec", Name: "x", Node: localNode(t), Spec: tt.spec})
			require.NoError(t, err)
			assert.Equal(t, tt.wantOutcome, ch.Outcome)
			assert.Equal(t, tt.wantChanged, ch.After.Outputs["changed"])
		})
	}
	_, err := NewExec().Canonicalize(model.Spec{"command": "true", "unchangedReturns": []any{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unchangedReturns")
}

// TestPuppetTaskWithRealPuppet runs Debian's puppet where it is installed;
// the fake above covers the exit codes everywhere.
func TestPuppetTaskWithRealPuppet(t *testing.T) {
	if _, err := exec.LookPath("puppet"); err != nil || testing.Short() {
		t.Skip("puppet is not installed (or -short)")
	}
	dir := t.TempDir()
	tests := []struct {
		name        string
		manifest    string
		wantOutcome model.Outcome
	}{
		{"a notify changes something", `notify { "cairn": }`, model.OutcomeUpdated},
		{"an empty manifest changes nothing", ``, model.OutcomeUnchanged},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			manifest := filepath.Join(dir, "site"+string(rune('a'+i))+".pp")
			require.NoError(t, os.WriteFile(manifest, []byte(tt.manifest+"\n"), 0o644))
			ch, err := convergePuppet(t, map[string]any{"puppet_manifest": manifest, "timeout": 120})
			require.NoError(t, err)
			assert.Equal(t, tt.wantOutcome, ch.Outcome)
		})
	}
}
