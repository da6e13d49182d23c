package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryAgainstServer builds the real binary and runs client verbs as
// a user would, against a real server: the token from the environment,
// exit codes from the process.
func TestBinaryAgainstServer(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go tool not found")
	bin := filepath.Join(t.TempDir(), "cairn")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %v\n%s", err, out)
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "bin-token"})
	s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("site.yaml", sitePackage(root, "hello"))

	tests := []struct {
		name   string
		args   []string
		token  string
		code   int
		stdout []string
		stderr string
	}{
		{"plan has changes", []string{"plan", "--stack", "web", pkg, "--detailed-exitcode"}, "bin-token", 2, []string{"+ file/motd will be created", "Plan: 2 to create"}, ""},
		{"apply", []string{"apply", "--stack", "web", pkg}, "bin-token", 0, []string{"2/2 created file/motd", "Apply completed", "created:    2"}, ""},
		{"plan without changes", []string{"plan", "--stack", "web", pkg, "--detailed-exitcode"}, "bin-token", 0, []string{"No changes."}, ""},
		{"without the token", []string{"stack", "list"}, "", 1, nil, "401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), envServer+"="+s.url, envToken+"="+tt.token, "NO_COLOR=")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			require.Equal(t, tt.code, code, "exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, &stdout, &stderr)
			for _, w := range tt.stdout {
				require.Contains(t, stdout.String(), w, "stdout lacks %q:\n%s", w, &stdout)
			}
			require.Contains(t, stderr.String(), tt.stderr, "stderr lacks %q:\n%s", tt.stderr, &stderr)
		})
	}
	require.Equal(t, "hello", readFile(t, root+"/site/motd"), "the binary's apply did not write the file")
}
