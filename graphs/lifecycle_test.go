package graphs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

const lifecycleGraph = `- id: keystone
  type: shell
  roles: ['*']
  test_pre:
    cmd: ruby /etc/puppet/modules/keystone_pre.rb
  test_post:
    cmd: ruby /etc/puppet/modules/keystone_post.rb
    timeout: 30
  reexecute_on: [deploy_changes]
  refresh_on: [keystone_config]
  parameters: {cmd: echo keystone}
`

func TestLifecycleFields(t *testing.T) {
	g, err := ParseGraph(Options{}, Source{Name: "tasks.yaml", Data: []byte(lifecycleGraph)})
	require.NoError(t, err)
	life, err := TaskLifecycle(g.Tasks[0])
	require.NoError(t, err)
	assert.Equal(t, &model.TaskCheck{Cmd: "ruby /etc/puppet/modules/keystone_pre.rb"}, life.TestPre)
	assert.Equal(t, &model.TaskCheck{Cmd: "ruby /etc/puppet/modules/keystone_post.rb", Timeout: 30}, life.TestPost)
	assert.Equal(t, []string{"deploy_changes"}, life.ReexecuteOn)
	assert.Equal(t, []string{"keystone_config"}, life.RefreshOn)

	// They survive a layer merge and a round trip through the graph document.
	merged, err := Merge("default", LayerGraph{Layer: model.LayerRelease, Owner: "r", Graph: g})
	require.NoError(t, err)
	out, err := MarshalGraph(merged, "yaml")
	require.NoError(t, err)
	again, err := ParseGraph(Options{}, Source{Name: "out.yaml", Data: out})
	require.NoError(t, err)
	life2, err := TaskLifecycle(again.Tasks[0])
	require.NoError(t, err)
	assert.Equal(t, life, life2)

	// Expansion carries the checks onto every step of the task.
	steps, err := Expand(g, []model.Node{{ID: "n1", Name: "n1", Roles: []string{"controller"}}, {ID: "n2", Name: "n2", Roles: []string{"compute"}}}, ExpandOptions{})
	require.NoError(t, err)
	require.Len(t, steps, 2)
	for _, s := range steps {
		assert.Equal(t, life.TestPre, s.TestPre, s.ID)
		assert.Equal(t, life.TestPost, s.TestPost, s.ID)
	}
}

func TestLifecycleRerunsOn(t *testing.T) {
	tests := []struct {
		name   string
		life   Lifecycle
		events []string
		want   bool
	}{
		{"no events", Lifecycle{ReexecuteOn: []string{"deploy_changes"}}, nil, false},
		{"reexecute_on named", Lifecycle{ReexecuteOn: []string{"deploy_changes"}}, []string{"deploy_changes"}, true},
		{"another event", Lifecycle{ReexecuteOn: []string{"deploy_changes"}}, []string{"upgrade"}, false},
		{"refresh_on named", Lifecycle{RefreshOn: []string{"nova_config"}}, []string{"nova_config"}, true},
		{"refresh_on any", Lifecycle{RefreshOn: []string{"*"}}, []string{"whatever"}, true},
		{"no lifecycle", Lifecycle{}, []string{"deploy_changes"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.life.RerunsOn(tt.events)) })
	}
}

func TestLifecycleBadInput(t *testing.T) {
	tests := []struct {
		name string
		task string
		line int
		path string
		msg  string
	}{
		{"test_pre not an object", "  test_pre: ruby x.rb\n", 5, "[0].test_pre", "expected {cmd: COMMAND"},
		{"test_post without cmd", "  test_post: {timeout: 3}\n", 5, "[0].test_post.cmd", "missing command"},
		{"unknown check field", "  test_pre: {cmd: x, command: y}\n", 5, "[0].test_pre.command", `unknown field "command"`},
		{"bad timeout", "  test_post: {cmd: x, timeout: -1}\n", 5, "[0].test_post.timeout", "positive"},
		{"reexecute_on not a list", "  reexecute_on: {a: b}\n", 5, "[0].reexecute_on", "list of strings"},
		{"refresh_on with a number", "  refresh_on: [nova_config, 3]\n", 5, "[0].refresh_on[1]", "expected a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "- id: a\n  type: shell\n  roles: ['*']\n  parameters: {cmd: echo}\n" + tt.task
			_, err := ParseGraph(Options{}, Source{Name: "bad.yaml", Data: []byte(doc)})
			var errs Errors
			require.True(t, errors.As(err, &errs), "%v", err)
			require.NotEmpty(t, errs)
			e := errs[0]
			assert.Equal(t, "bad.yaml", e.Pos.Source)
			assert.Equal(t, tt.line, e.Pos.Line)
			assert.Equal(t, tt.path, e.Path)
			assert.Contains(t, e.Message, tt.msg)
		})
	}

	// A task built in code with a wrong shape fails its expansion, naming the field.
	g := &model.Graph{Type: "default", Tasks: []*model.Task{{ID: "a", Type: "shell", Roles: []string{"*"},
		Parameters: map[string]any{"cmd": "echo"}, Extra: map[string]any{FieldTestPre: "ruby x.rb"}}}}
	_, err := Expand(g, []model.Node{{ID: "n1", Name: "n1"}}, ExpandOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test_pre")
}
