package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestApplyDetailedExitcodes applies packages with Puppet's
// --detailed-exitcodes: 2 for changes, 4 for failed steps, 6 for both, 0
// for a run that changed nothing.
func TestApplyDetailedExitcodes(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("bitmask")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	failing := "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: boom}\nspec: {command: \"echo broken >&2; exit 3\"}\n"
	tests := []struct {
		name string
		pkg  string
		args []string
		want int
		has  []string
	}{
		{"changes", sitePackage(root, "hello"), nil, 2, []string{"Apply completed"}},
		{"no changes", sitePackage(root, "hello"), nil, 0, []string{"unchanged file/motd"}},
		{"failures without changes", sitePackage(root, "hello") + failing, []string{"--on-failure", "continue"}, 4, []string{"failed exec/boom"}},
		{"changes and failures", sitePackage(root, "bonjour") + failing, []string{"--on-failure", "continue"}, 6, []string{"updated file/motd", "failed exec/boom"}},
		{"failures rolled back count as failures only", sitePackage(root, "hola") + failing, nil, 4, []string{"rolled back file/motd"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg := s.file(filepath.Join("bitmask", string(rune('a'+i))+".yaml"), tt.pkg)
			args := append([]string{"apply", "--stack", id, pkg, "--detailed-exitcodes"}, tt.args...)
			s.run(args...).expect(t, tt.want).has(t, tt.has...)
		})
	}
	t.Run("one of the two detailed flags", func(t *testing.T) {
		pkg := s.file("bitmask/z.yaml", sitePackage(root, "hello"))
		s.run("apply", "--stack", id, pkg, "--detailed-exitcodes", "--detailed-exitcode").expect(t, 1).
			hasErr(t, "detailed-exitcode", "detailed-exitcodes")
	})
}

// puppetGraph is a graph of type typ whose puppet tasks run a fake puppet
// exiting with the given codes, one task per code.
func puppetGraph(typ string, codes ...string) string {
	out := "apiVersion: cairn/v1\nkind: Graph\nmetadata: {name: " + typ + ", type: " + typ + "}\ntasks:\n"
	for _, c := range codes {
		out += "  - id: site-" + c + "\n    type: puppet\n    roles: ['*']\n" +
			"    parameters: {puppet_manifest: /etc/puppet/site.pp, env: {PUPPET_EXIT: '" + c + "'}}\n"
	}
	return out
}

// TestGraphExecuteDetailedExitcodes runs puppet tasks whose (fake) puppet
// exits 0, 2, 4: the execution's exit code is Puppet's bitmask.
func TestGraphExecuteDetailedExitcodes(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\nexit \"${PUPPET_EXIT:-0}\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "puppet"), []byte(fake), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	s := newAPIServer(t, apiServerOptions{temporal: true})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}})
	tests := []struct {
		typ   string
		codes []string
		args  []string
		want  int
	}{
		{"unchanged", []string{"0"}, nil, 0},
		{"changed", []string{"0", "2"}, nil, 2},
		{"failed", []string{"4"}, nil, 4},
		{"both", []string{"2", "6"}, []string{"--on-failure", "continue"}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			s.run("graph", "upload", "--cluster", cluster, "--type", tt.typ, "--file", s.file(tt.typ+".yaml", puppetGraph(tt.typ, tt.codes...))).expect(t, 0)
			args := append([]string{"graph", "execute", "--cluster", cluster, "--type", tt.typ, "--detailed-exitcodes"}, tt.args...)
			s.run(args...).expect(t, tt.want)
			// Without the flag a failure is 1 and anything else 0.
			if tt.want < 4 {
				s.run("graph", "execute", "--cluster", cluster, "--type", tt.typ, "--force").expect(t, 0)
			}
		})
	}
}

// TestExitFor covers the codes end-to-end runs reach rarely: cancels,
// rollbacks and executions with no report.
func TestExitFor(t *testing.T) {
	changed := &model.Report{Created: 1}
	failed := &model.Report{Updated: 1, Failed: 1}
	tests := []struct {
		name string
		mode exitMode
		ex   model.Execution
		want int
	}{
		{"plain changes", exitPlain, model.Execution{Status: model.ExecCompleted, Report: changed}, 0},
		{"detailed changes", exitDetailed, model.Execution{Status: model.ExecCompleted, Report: changed}, 2},
		{"detailed failure", exitDetailed, model.Execution{Status: model.ExecFailed, Report: failed}, 1},
		{"bitmask no report", exitBitmask, model.Execution{Status: model.ExecCompleted}, 0},
		{"bitmask changes", exitBitmask, model.Execution{Status: model.ExecCompleted, Report: changed}, 2},
		{"bitmask failure and changes", exitBitmask, model.Execution{Status: model.ExecFailed, Report: failed}, 6},
		{"bitmask rollback undid the changes", exitBitmask, model.Execution{Status: model.ExecRolledBack, Report: &model.Report{Updated: 1, Failed: 1, RolledBack: true}}, 4},
		{"bitmask cancel without a failed step", exitBitmask, model.Execution{Status: model.ExecCanceled, Report: changed}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := tt.ex
			err := exitFor(tt.mode, &ex, executionOutcome(&ex))
			code := exitOK
			var ee *exitError
			if errors.As(err, &ee) {
				code = ee.code
			}
			require.Equal(t, tt.want, code)
		})
	}
}
