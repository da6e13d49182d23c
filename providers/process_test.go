package providers

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A command that leaves a child in the background returns when the command
// itself exits: the child (still holding our pipes) is neither waited for
// nor killed.
func TestRunCommandDoesNotWaitForBackgroundChildren(t *testing.T) {
	res, err := runCommand(context.Background(), command{Argv: []string{"/bin/sh", "-c", "sleep 60 & echo $!"}, Timeout: 120 * time.Second})
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	require.NoError(t, err, "stdout = %q", res.Stdout)
	defer syscall.Kill(pid, syscall.SIGKILL)
	err = syscall.Kill(pid, 0)
	require.NoError(t, err, "the background child is gone (%v): runCommand waited for it or killed it", err)
}

func TestRunCommandReportsExitCodeAndStdin(t *testing.T) {
	res, err := runCommand(context.Background(), command{Argv: []string{"/bin/sh", "-c", "cat; exit 3"}, Stdin: []byte("in")})
	require.NoError(t, err)
	require.Equal(t, 3, res.ExitCode, "got exit %d stdout %q", res.ExitCode, res.Stdout)
	require.Equal(t, "in", string(res.Stdout), "got exit %d stdout %q", res.ExitCode, res.Stdout)
}
