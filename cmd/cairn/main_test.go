package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinary builds the real binary and runs it as a user would: exit
// codes and output streams must match the in-process commands.
func TestBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go tool not found")
	bin := filepath.Join(t.TempDir(), "cairn")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %v\n%s", err, out)
	dir := writeFiles(t, map[string]string{
		"pkg.yaml":   motdPackage,
		"graph.yaml": upgradeGraph,
		"bad.yaml":   "apiVersion: cairn/v1\nkind: Fiel\nmetadata: {name: x}\n",
		"nodes.yaml": clusterNodes,
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"valid", []string{"validate", p("pkg.yaml"), p("graph.yaml")}, 0, "2 files: 2 resources, 1 graph (3 tasks): valid", ""},
		{"invalid", []string{"validate", p("bad.yaml")}, 1, "", p("bad.yaml") + ":2:7: kind: "},
		{"show", []string{"graph", "show", p("graph.yaml"), "--nodes", p("nodes.yaml")}, 0, "stop-api@n1 [exec] <- maintenance-on@n1", ""},
		{"usage error", []string{"graph", "show"}, 1, "", "requires at least 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tt.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			require.Equal(t, tt.code, code, "exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, &stdout, &stderr)
			require.Contains(t, stdout.String(), tt.stdoutHas, "stdout: %s\nstderr: %s", &stdout, &stderr)
			require.Contains(t, stderr.String(), tt.stderrHas, "stdout: %s\nstderr: %s", &stdout, &stderr)
			if tt.code != 0 {
				require.LessOrEqual(t, stdout.Len(), 0, "failure wrote to stdout: %s", &stdout)
			}
		})
	}
}
