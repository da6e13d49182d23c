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
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "bin-token", tokens: map[string]string{"alice": aliceToken}})
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
			r := runBinary(t, bin, s.url, tt.token, tt.args...).expect(t, tt.code)
			r.has(t, tt.stdout...)
			r.hasErr(t, tt.stderr)
		})
	}
	require.Equal(t, "hello", readFile(t, root+"/site/motd"), "the binary's apply did not write the file")

	t.Run("approved and rejected plans", func(t *testing.T) {
		changed := s.file("site2.yaml", sitePackage(root, "bonjour"))
		plan := func() string {
			r := runBinary(t, bin, s.url, "bin-token", "apply", "--stack", "web", changed, "--approve-required", "--detailed-exitcodes").expect(t, 2)
			r.has(t, "~ file/motd will be updated", "awaits approval")
			return awaitsApproval.FindStringSubmatch(r.stdout)[1]
		}
		rejected := plan()
		runBinary(t, bin, s.url, aliceToken, "exec", "reject", rejected, "--comment", "no").expect(t, 0).has(t, rejected+" rejected by alice")
		runBinary(t, bin, s.url, aliceToken, "exec", "reject", rejected).expect(t, 1).hasErr(t, "409")
		require.Equal(t, "hello", readFile(t, root+"/site/motd"), "a rejected plan changed the file")
		approved := plan()
		r := runBinary(t, bin, s.url, aliceToken, "exec", "approve", approved).expect(t, 0).has(t, approved+" approved by alice", "applying as ")
		runBinary(t, bin, s.url, "bin-token", "exec", "watch", applyingAs.FindStringSubmatch(r.stdout)[1]).expect(t, 0).has(t, "Apply completed")
		require.Equal(t, "bonjour", readFile(t, root+"/site/motd"), "the approved plan did not write the file")
	})
}

// runBinary runs the built cairn with the server and token in its
// environment, as a user would.
func runBinary(t *testing.T, bin, server, token string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), envServer+"="+server, envToken+"="+token, "NO_COLOR=")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}
