package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BuildCairn builds this module's cairn command into a temporary
// directory of t and returns the binary's path; the test fails when it
// does not build. With a warm build cache it takes seconds.
func BuildCairn(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatalf("module root: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cairn")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cairn: %v\n%s", err, out)
	}
	return bin
}

// Crash ends process pid as a crashed host would end it, with every
// command it started (commands run in process groups of their own): it
// is frozen (SIGSTOP) so it starts nothing more, its children are found
// while they are still its own, then it and each child's process group
// are killed (SIGKILL). The caller reaps pid.
func Crash(pid int) {
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	children := ChildrenOf(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, child := range children {
		_ = syscall.Kill(-child, syscall.SIGKILL)
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
}

// ChildrenOf lists the processes whose parent is pid (from /proc).
func ChildrenOf(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == pid {
			if child, err := strconv.Atoi(strings.Fields(s)[0]); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}
