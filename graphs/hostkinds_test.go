package graphs

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// TestBuildFileLineAutoEdge: a file_line runs after the file resource of
// its path (Puppet's autorequire), and only that one.
func TestBuildFileLineAutoEdge(t *testing.T) {
	pkg := &model.Package{Resources: []*model.Resource{
		res("file_line", "root", map[string]any{"path": "/etc/ssh/sshd_config", "line": "PermitRootLogin no"}),
		res("File", "sshd", map[string]any{"path": "/etc/ssh/sshd_config/", "content": "Port 22\n"}),
		res("File", "other", map[string]any{"path": "/etc/ssh/ssh_config", "content": ""}),
		res("file_line", "loose", map[string]any{"path": "/etc/hosts", "line": "127.0.0.1 x"}),
	}}
	steps, err := BuildPackage(pkg, kinds.Builtin(), expandCluster)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"file_line/root": {"file/sshd"}}, depsOf(steps))
}
