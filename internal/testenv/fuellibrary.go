package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuelLibrary is the directory of fuel-library's task files kept beside
// the repository (../shared/testdata/fuel-library, see its SOURCE.md).
// When they are not there the test fails if CAIRN_REQUIRE_ALL is set and
// skips otherwise, as with every part testenv gives.
func FuelLibrary(t testing.TB) string {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		missing(t, "fuel-library's task files", err)
		return ""
	}
	dir := filepath.Join(root, "..", "shared", "testdata", "fuel-library")
	if m, _ := filepath.Glob(filepath.Join(dir, "deployment_*.yaml")); len(m) == 0 {
		if _, err := os.Stat(dir); err != nil {
			missing(t, "fuel-library's task files", err)
		} else {
			missing(t, "fuel-library's task files", fmt.Errorf("no deployment_*.yaml in %s", dir))
		}
	}
	return filepath.Clean(dir)
}
