package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryAgainstServer builds the real binary and runs client verbs as
// a user would, against a real server: the token from the environment,
// exit codes from the process.
func TestBinaryAgainstServer(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "bin-token"})
	s.stack("web")
	root := s.path("target")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
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
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, &stdout, &stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout.String(), w) {
					t.Fatalf("stdout lacks %q:\n%s", w, &stdout)
				}
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("stderr lacks %q:\n%s", tt.stderr, &stderr)
			}
		})
	}
	if readFile(t, root+"/site/motd") != "hello" {
		t.Fatal("the binary's apply did not write the file")
	}
}
