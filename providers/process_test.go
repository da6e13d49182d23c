package providers

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRunCommandDoesNotWaitForBackgroundChildren(t *testing.T) {
	start := time.Now()
	res, err := runCommand(context.Background(), command{Argv: []string{"/bin/sh", "-c", "sleep 5 & echo started"}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "started" {
		t.Fatalf("stdout = %q", got)
	}
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Fatalf("waited %s for a background child", elapsed)
	}
}

func TestRunCommandReportsExitCodeAndStdin(t *testing.T) {
	res, err := runCommand(context.Background(), command{Argv: []string{"/bin/sh", "-c", "cat; exit 3"}, Stdin: []byte("in")})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "in" {
		t.Fatalf("got exit %d stdout %q", res.ExitCode, res.Stdout)
	}
}
