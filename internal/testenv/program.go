package testenv

import (
	"os/exec"
	"testing"
)

// Program returns the path of a program the test needs (rsync), or skips
// the test when it is missing, unless CAIRN_REQUIRE_ALL is set: then a
// missing program fails it.
func Program(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "the "+name+" program", err)
	}
	return p
}
