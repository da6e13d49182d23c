package graphs

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestValidateGraph(t *testing.T) {
	at := func(line int) model.Position { return model.Position{Source: "merged", Line: line, Column: 3} }
	g := &model.Graph{Type: "upgrade", Tasks: []*model.Task{
		{ID: "a", Type: "shell", Requires: []string{"b"}, Parameters: map[string]any{"cmd": "x", "timout": 5}, Pos: at(1)},
		{ID: "b", Type: "stage", Requires: []string{"a", "ghost"}, Condition: "{{ if }}", Pos: at(5)},
		{ID: "a", Type: "stage", Pos: at(9)},
		{ID: "c", Type: "shel", Pos: at(12)},
		{ID: "", Type: "", Pos: at(14)},
		{ID: "g", Type: "group", Tasks: []string{"c", "nobody"}, Pos: at(16)},
	}}
	sameLines(t, errLinesOf(ValidateGraph(nil, g)), []string{
		`merged:1:3: tasks[0].parameters.timout: unknown field "timout"; did you mean "timeout"?`,
		`merged:1:3: tasks[0].requires: dependency cycle: a -> b -> a`,
		`merged:5:3: tasks[1].condition: invalid expression: condition: line 1: missing value for if`,
		`merged:9:3: tasks[2].id: duplicate task id "a": first defined at merged:1:3`,
		`merged:12:3: tasks[3].type: unknown task type "shel"; did you mean "shell"?`,
		`merged:14:3: tasks[4].id: missing task id`,
		`merged:14:3: tasks[4].type: missing task type`,
		`merged:16:3: tasks[5].tasks[1]: group member "nobody": no such task in graph "upgrade"`,
	})
}

func TestValidatePackage(t *testing.T) {
	at := func(line int) model.Position { return model.Position{Source: "pkg", Line: line, Column: 1} }
	pkg := &model.Package{Resources: []*model.Resource{
		{Kind: "file", Name: "a", Spec: map[string]any{"path": "/a", "content": "x"}, DependsOn: []model.Ref{{Kind: "directory", Name: "d"}}, Pos: at(1)},
		{Kind: "directory", Name: "d", Spec: map[string]any{"path": "/a", "mode": true}, DependsOn: []model.Ref{{Kind: "file", Name: "a"}}, Pos: at(4)},
		{Kind: "File", Name: "a", Spec: map[string]any{"path": "/b", "content": "y"}, Pos: at(7)},
		{Kind: "gizmo", Name: "g", Associations: []model.Ref{{Kind: "Label", Name: "l"}}, Pos: at(9)},
		{Kind: "exec", Pos: at(11), Spec: map[string]any{"command": "true"}},
	}}
	sameLines(t, errLinesOf(ValidatePackage(nil, pkg)), []string{
		`pkg:1:1: dependsOn: dependency cycle: file/a -> directory/d -> file/a`,
		`pkg:4:1: spec.mode: expected string or integer, got boolean`,
		`pkg:7:1: metadata.name: duplicate resource File/a: first defined at pkg:1:1`,
		`pkg:9:1: associations[0]: associated with Label/l: no such resource in the package`,
		`pkg:9:1: kind: unknown kind "gizmo"`,
		`pkg:11:1: metadata.name: missing metadata.name`,
	})
}

// Layers are read with Partial (a cluster layer overrides part of a
// release task and refers to release tasks), merged, and the merged graph
// is validated as a whole.
func TestPartialLayersValidateAfterMerge(t *testing.T) {
	release := `
- id: netconfig
  type: shell
  parameters: {cmd: configure-network, timeout: 60}
- id: deploy
  type: shell
  requires: [netconfig]
  parameters: {cmd: deploy}
`
	cluster := `
- id: netconfig
  parameters: {timeout: 120}
- id: post-check
  type: shell
  requires: [deploy]
  parameters: {cmd: check, bogus: 1}
`
	opts := Options{Partial: true}
	rel, err := ParseGraph(opts, Source{Name: "release.yaml", Data: []byte(release)})
	require.NoError(t, err)
	clu, err := ParseGraph(opts, Source{Name: "cluster.yaml", Data: []byte(cluster)})
	require.NoError(t, err, "a partial layer is refused")
	_, err = ParseGraph(Options{}, Source{Name: "cluster.yaml", Data: []byte(cluster)})
	require.Error(t, err, "the cluster layer alone is valid without Partial")
	merged, err := Merge(model.DefaultGraphType,
		LayerGraph{Layer: model.LayerRelease, Owner: "r1", Graph: rel},
		LayerGraph{Layer: model.LayerCluster, Owner: "c1", Graph: clu})
	require.NoError(t, err)
	sameLines(t, errLinesOf(ValidateGraph(nil, merged)), []string{
		`cluster.yaml:4:3: tasks[2].parameters.bogus: unknown field "bogus"`,
	})
}

func errLinesOf(es Errors) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Error())
	}
	return out
}
