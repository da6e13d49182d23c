package yaql

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// A node's reported facts are its "facts" attribute, read by expressions
// through $ and $node; what the operator set wins, key by key.
func TestNodeFactsInDeploymentData(t *testing.T) {
	facts := &model.NodeFacts{Hostname: "web-1", Addresses: []string{"10.0.0.5/24"}, OS: model.OSFacts{ID: "debian", VersionID: "12"},
		CPUs: 8, MemoryBytes: 16 << 30, BootID: "b920bb6e-98f5-4e5d-8a5d-ef1f1e34e743", ReportedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c := &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
		{ID: "1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent, Facts: facts},
		{ID: "2", Name: "web-2", Roles: []string{"web"}, Mode: model.NodeAgent, Facts: facts,
			Attributes: map[string]any{"facts": map[string]any{"cpus": 2, "os": map[string]any{"id": "ubuntu"}}, "hostname": "ops-name"}},
		{ID: "3", Name: "web-3", Roles: []string{"web"}},
	}}
	tests := []struct {
		node, expr string
		want       any
	}{
		{"1", "$.facts.hostname", "web-1"},
		{"1", "$node.facts.cpus", int64(8)},
		{"1", "$.facts.os.versionId", "12"},
		{"1", "$.facts.addresses[0]", "10.0.0.5/24"},
		{"1", "$.facts.memoryBytes > 8589934592", true},
		{"1", "$.facts.reportedAt", "2026-01-02T03:04:05Z"},
		{"2", "$.facts.cpus", int64(2)},
		{"2", "$.facts.os.id", "ubuntu"},
		{"2", "$.facts.os.versionId", "12"},
		{"2", "$.facts.hostname", "web-1"},
		{"2", "$.hostname", "ops-name"},
		{"3", "$.get('facts')", nil},
	}
	for _, tt := range tests {
		t.Run(tt.node+" "+tt.expr, func(t *testing.T) {
			d, err := DeploymentData(c, nil, c.Node(tt.node))
			require.NoError(t, err)
			e, err := Parse(tt.expr)
			require.NoError(t, err)
			got, err := e.Eval(d.Input(nil))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
