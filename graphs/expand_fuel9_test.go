package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// Fuel 9: tags select nodes, and in a task-based graph (every task version
// 2.0.0 or later) members do not inherit their group's dependencies.
func TestExpandTagsAndTaskBased(t *testing.T) {
	nodes := []model.Node{
		{ID: "n1", Roles: []string{"primary-controller"}, Attributes: map[string]any{"tags": []any{"primary-controller", "primary-database"}}},
		{ID: "n2", Roles: []string{"controller"}, Attributes: map[string]any{"tags": []any{"controller", "database"}}},
		{ID: "n3", Roles: []string{"compute"}},
	}
	graph := func(version string, tags any) *model.Graph {
		db := &model.Task{ID: "db", Type: "shell", Version: version, Groups: []string{"compute"}, Parameters: map[string]any{"cmd": "true"}}
		if tags != nil {
			db.Extra = map[string]any{"tags": tags}
		}
		return &model.Graph{Type: "default", Tasks: []*model.Task{
			{ID: "controller", Type: "group", Roles: []string{"controller"}},
			{ID: "compute", Type: "group", Roles: []string{"compute"}, Requires: []string{"controller"}},
			db,
			{ID: "web", Type: "shell", Version: version, Groups: []string{"compute"}, Parameters: map[string]any{"cmd": "true"}},
		}}
	}
	tests := []struct {
		name    string
		version string
		tags    any
		deps    map[string][]string // steps of db and web → their dependencies
		err     string
	}{
		{"granular: members inherit the group's requires", "1.0.0", nil,
			map[string][]string{"db@n3": {"controller@n2"}, "web@n3": {"controller@n2"}}, ""},
		{"task-based: they do not", "2.1.0", nil,
			map[string][]string{"db@n3": nil, "web@n3": nil}, ""},
		{"tags select the nodes having one", "2.1.0", []any{"primary-database", "database"},
			map[string][]string{"db@n1": nil, "db@n2": nil, "web@n3": nil}, ""},
		{"a node without tags has its roles", "2.1.0", []any{"compute"},
			map[string][]string{"db@n3": nil, "web@n3": nil}, ""},
		{"tags not a list", "2.1.0", "database", nil, `tags: expected a list of strings, got a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Expand(graph(tt.version, tt.tags), nodes, ExpandOptions{})
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			got := map[string][]string{}
			for _, s := range steps {
				if s.Task == "db" || s.Task == "web" {
					got[s.ID] = s.Deps
				}
			}
			assert.Equal(t, tt.deps, got)
		})
	}
}

func TestTaskBased(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		want     bool
	}{
		{"all 2.x", []string{"2.0.0", "2.2.0"}, true},
		{"one without a version", []string{"2.0.0", ""}, false},
		{"one 1.x", []string{"1.0.0", "2.1.0"}, false},
		{"a later major", []string{"3.0"}, true},
		{"unreadable", []string{"x"}, false},
		{"no tasks but stages", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks := []*model.Task{{ID: "s", Type: model.TaskStage}, {ID: "g", Type: model.TaskGroup}}
			for i, v := range tt.versions {
				tasks = append(tasks, &model.Task{ID: string(rune('a' + i)), Type: "shell", Version: v})
			}
			assert.Equal(t, tt.want, taskBased(tasks))
		})
	}
}
