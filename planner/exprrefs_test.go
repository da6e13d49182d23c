package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
)

func TestPlanOrderFollowsExpressionRefs(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"dep call", `
kind: exec
metadata: {name: b}
spec: {command: "echo {{ (dep \"File/a\").checksum }}"}
---
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
`, []string{"file/a", "exec/b"}},
		{".deps field, through a chain", `
kind: exec
metadata: {name: c}
spec: {command: "echo {{ .deps.b.id }}"}
---
kind: exec
metadata: {name: b}
spec: {command: "echo {{ index (dep \"file/a\") \"size\" }}"}
---
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
`, []string{"file/a", "exec/b", "exec/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := kinds.Builtin()
			docs, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "t.yaml", Data: []byte(tt.src)})
			require.NoError(t, err)
			steps, err := graphs.BuildPackage(docs.Package, cat, nil)
			require.NoError(t, err)
			b := NewBuilder(contract.ModeApply)
			require.NoError(t, b.AddCurrent(steps, cat, nil))
			p, err := b.Plan(1)
			require.NoError(t, err)
			var order []string
			for _, s := range p.Order {
				order = append(order, s.ID)
			}
			assert.Equal(t, tt.want, order)
			assert.True(t, p.Order[0].Exported, "the outputs an expression reads are kept")
		})
	}
}
