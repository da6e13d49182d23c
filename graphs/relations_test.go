package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// Relations to tasks a graph does not have are dropped with a warning, as
// Fuel's task-based deployment dropped them; the did-you-mean stays.
func TestMissingRelationsWarn(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		errs, want []string
	}{
		{"requires, required_for and groups", `
- id: a
  type: stage
  requires: [b, ghost]
  required_for: [nope]
- id: b
  type: group
  tasks: [a, lost]
  groups: [nogroup]
`, []string{
			`g.yaml:8:14: [1].tasks[1]: group member "lost": no such task in graph "default"`,
		}, []string{
			`g.yaml:4:17: [0].requires[1]: requires "ghost": no such task in graph "default": ` + relationDropped,
			`g.yaml:5:18: [0].required_for[0]: required for "nope": no such task in graph "default": ` + relationDropped,
			`g.yaml:9:12: [1].groups[0]: group "nogroup": no such task in graph "default": ` + relationDropped,
		}},
		{"a near id is suggested", `
- id: stop-api
  type: stage
- id: b
  type: stage
  requires: [stop-apj]
`, nil, []string{
			`g.yaml:6:14: [1].requires[0]: requires "stop-apj": no such task in graph "default"; did you mean "stop-api"?: ` + relationDropped,
		}},
		{"a regex group is no reference", `
- id: controller
  type: group
  roles: [controller]
- id: a
  type: shell
  groups: ['/.*/']
  parameters: {cmd: "true"}
`, nil, nil},
		{"a bad regex group", `
- id: a
  type: shell
  groups: ['/[/']
  parameters: {cmd: "true"}
`, []string{"g.yaml:4:12: [0].groups[0]: invalid pattern \"/[/\": missing closing ]: `[`"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Parse(Options{}, Source{Name: "g.yaml", Data: []byte(tt.src)})
			sameLines(t, parseErrLines(t, err), tt.errs)
			var warns []string
			if docs != nil {
				for _, w := range docs.Warnings {
					warns = append(warns, w.Error())
				}
			}
			sameLines(t, warns, tt.want)
		})
	}
}

// A /regex/ in groups puts the task on the nodes of every group task whose
// id it matches, without making it a member (Step.Group); missing
// relations make no edge.
func TestExpandRegexGroupsAndDroppedRelations(t *testing.T) {
	nodes := []model.Node{
		{ID: "n1", Roles: []string{"controller"}},
		{ID: "n2", Roles: []string{"compute"}},
		{ID: "n3", Roles: []string{"ceph-osd"}},
	}
	tests := []struct {
		name   string
		groups []string
		want   map[string]string // step → its group
	}{
		{"every group's nodes", []string{"/.*/"}, map[string]string{"a@n1": "", "a@n2": ""}},
		{"the groups the pattern matches from the start", []string{"/comp/"}, map[string]string{"a@n2": ""}},
		{"a literal group orders, a pattern places", []string{"/comp/", "controller"}, map[string]string{"a@n1": "controller", "a@n2": ""}},
		{"a missing group is dropped", []string{"primary-neutron", "controller"}, map[string]string{"a@n1": "controller"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &model.Graph{Type: "default", Tasks: []*model.Task{
				{ID: "controller", Type: "group", Roles: []string{"controller"}},
				{ID: "compute", Type: "group", Roles: []string{"compute"}, Requires: []string{"controller", "set_status_provisioned"}},
				{ID: "a", Type: "shell", Groups: tt.groups, RequiredFor: []string{"gone"}, Parameters: map[string]any{"cmd": "true"}},
			}}
			steps, err := Expand(g, nodes, ExpandOptions{})
			require.NoError(t, err)
			got := map[string]string{}
			for _, s := range steps {
				if s.Task == "a" {
					got[s.ID] = s.Group
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
