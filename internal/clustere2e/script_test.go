package clustere2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

// scripts/temporal-cluster.sh refuses settings it cannot run with, saying
// why, before it starts anything.
func TestClusterScriptRefusesBadSettings(t *testing.T) {
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"port too high", []string{"TEMPORAL_CLUSTER_PORT=32760"}, []string{"describe"}, "below 32768"},
		{"port not a number", []string{"TEMPORAL_CLUSTER_PORT=abc"}, []string{"describe"}, "below 32768"},
		{"database not PostgreSQL", []string{"TEMPORAL_CLUSTER_DB_URL=mysql://u@h/db"}, []string{"setup"}, "is not postgres://"},
		{"no database", []string{"TEMPORAL_CLUSTER_DB_URL=", "CAIRN_TEST_POSTGRES_URL="}, []string{"setup"}, "set TEMPORAL_CLUSTER_DB_URL"},
		{"unknown host", nil, []string{"run", "history-3"}, "no host history-3"},
		{"unknown command", nil, []string{"launch"}, "temporal-cluster.sh up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(root, "scripts", "temporal-cluster.sh"), tc.args...)
			// An empty BIN: nothing is built before the settings are checked.
			cmd.Env = append(os.Environ(), "BIN="+t.TempDir(), "TEMPORAL_CLUSTER_DIR="+t.TempDir())
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%s", out)
			assert.Contains(t, string(out), tc.want)
		})
	}
}
