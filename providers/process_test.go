package providers

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command that leaves a child in the background returns when the command
// itself exits: the child (still holding our pipes) is neither waited for
// nor killed.
func TestRunCommandDoesNotWaitForBackgroundChildren(t *testing.T) {
	res, err := runCommand(context.Background(), command{Argv: []string{"/bin/sh", "-c", "sleep 60 & echo $!"}, Timeout: 120 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil {
		t.Fatalf("stdout = %q", res.Stdout)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the background child is gone (%v): runCommand waited for it or killed it", err)
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
