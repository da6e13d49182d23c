package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and returns its controlling side and the
// terminal a program writes to.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err, "open /dev/ptmx")
	fd := int(ptm.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0), "unlock pty")
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err, "pty number")
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err, "open pty")
	t.Cleanup(func() { _ = tty.Close(); _ = ptm.Close() })
	return ptm, tty
}

// runOnTerminal runs cairn in-process with stdout on a terminal and
// returns what the terminal showed.
func runOnTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ptm, tty := openPTY(t)
	var mu sync.Mutex // the reader writes shown while the command runs
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := execute(ctx, args, tty, &stderr)
	// With the terminal closed, the reader gets what is left, then EIO.
	_ = tty.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	mu.Lock()
	defer mu.Unlock()
	if stderr.Len() > 0 && code != 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return code, strings.ReplaceAll(shown.String(), "\r\n", "\n")
}

func TestPlanColours(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("site.yaml", sitePackage(root, "hello"))
	plan := []string{"plan", "--stack", id, pkg, "--server", s.url}
	green := "\x1b[32m+\x1b[0m"

	tests := []struct {
		name     string
		terminal bool
		noColor  string
		flags    []string
		coloured bool
	}{
		{"terminal", true, "", nil, true},
		{"terminal with NO_COLOR", true, "1", nil, false},
		{"terminal with --no-color", true, "", []string{"--no-color"}, false},
		{"terminal with --color=never", true, "", []string{"--color", "never"}, false},
		{"pipe", false, "", nil, false},
		{"pipe with --color=always", false, "", []string{"--color", "always"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			args := append(append([]string{}, plan...), tt.flags...)
			var code int
			var out string
			if tt.terminal {
				code, out = runOnTerminal(t, args...)
			} else {
				r := runCairn(t, args...)
				code, out = r.code, r.stdout
			}
			require.Equal(t, 0, code, "exit %d:\n%s", code, out)
			require.Contains(t, out, "directory/site", "no plan shown")
			require.Contains(t, out, " to create, ", "no plan shown")
			got := strings.Contains(out, green)
			require.Equal(t, tt.coloured, got, "coloured = %v, want %v:\n%q", got, tt.coloured, out)
			if !tt.coloured {
				require.False(t, ansi(out), "ANSI sequences without colour:\n%q", out)
			}
		})
	}
}

// TestApplyLiveProgress runs apply on a terminal: the bar is redrawn in
// place on the last line, step lines print above it, coloured.
func TestApplyLiveProgress(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("web")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("site.yaml", sitePackage(root, "hello"))
	code, out := runOnTerminal(t, "apply", "--stack", id, pkg, "--server", s.url)
	require.Equal(t, 0, code, "exit %d:\n%q", code, out)
	for _, want := range []string{
		"\r\x1b[K[",                             // the bar, redrawn in place
		"\x1b[32mcreated\x1b[0m directory/site", // a step line, coloured
		"\x1b[32mcreated\x1b[0m file/motd",
		"[========================] 2/2 steps", // the last bar stays
		"Apply completed",
	} {
		require.Contains(t, out, want, "terminal output lacks %q:\n%q", want, out)
	}
	// Step lines never start with the bar on a terminal.
	require.NotContains(t, out, "] 1/2 created", "step lines carry the bar on a terminal")
}
