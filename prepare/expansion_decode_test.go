package prepare

import (
	"encoding/json"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// An expansion decodes step by step to the steps it was encoded from, each
// repeated string held once: a dependency is the depended-on step's id,
// the copies of a task share its condition.
func TestExpansionDecodesStepsInterned(t *testing.T) {
	yes := false
	var steps []*model.Step
	for n := range 40 {
		node := fmt.Sprint(n + 1)
		steps = append(steps,
			&model.Step{ID: "hosts@" + node, Kind: "shell", Name: "hosts", Task: "hosts", Node: node,
				Condition: `yaql: changed($.network_metadata.nodes)`, Spec: model.Spec{"cmd": "true", "timeout": json.Number("60")},
				Meta: model.Meta{Noop: n%2 == 0}, FailOnError: &yes, Group: "compute"},
			&model.Step{ID: "netconfig@" + node, Kind: "puppet", Name: "netconfig", Task: "netconfig", Node: node,
				Deps: []string{"hosts@" + node, "deploy_start@master"}, AnyOf: [][]string{{"hosts@1", "hosts@2"}},
				Strategy: 3, StrategyScope: "compute"})
	}
	doc := expansionDoc{Cluster: "fleet", Nodes: []string{"1"}, Types: []expansionEntry{
		{Type: "default", Graph: json.RawMessage(`{"tasks":[]}`), Steps: steps},
		{Type: "empty", Graph: json.RawMessage(`{}`)},
	}}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)

	var got expansionDoc
	require.NoError(t, json.Unmarshal(raw, &got))
	// The reference: the steps as json.Unmarshal decodes them whole.
	plain := struct {
		Types []struct {
			Steps []*model.Step `json:"steps"`
		} `json:"types"`
	}{}
	require.NoError(t, json.Unmarshal(raw, &plain))
	require.Len(t, got.Types, 2)
	assert.Equal(t, "fleet", got.Cluster)
	assert.Equal(t, []string{"1"}, got.Nodes)
	assert.Equal(t, "default", got.Types[0].Type)
	assert.JSONEq(t, `{"tasks":[]}`, string(got.Types[0].Graph))
	assert.Equal(t, plain.Types[0].Steps, got.Types[0].Steps)
	assert.Equal(t, "empty", got.Types[1].Type)
	assert.Empty(t, got.Types[1].Steps)

	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	ids := map[string]string{}
	for _, s := range got.Types[0].Steps {
		ids[s.ID] = s.ID
	}
	first := got.Types[0].Steps[0]
	for _, s := range got.Types[0].Steps {
		for _, d := range s.Deps {
			if id, ok := ids[d]; ok {
				assert.True(t, same(id, d), "%s: dependency %s is the step's id", s.ID, d)
			}
		}
		if s.Task == "hosts" {
			assert.True(t, same(first.Condition, s.Condition), "%s: condition shared", s.ID)
			assert.True(t, same(first.Name, s.Name), "%s: name shared", s.ID)
		}
	}
}

// What an expansion entry does not know is skipped; what is not an entry
// is an error, not a panic.
func TestExpansionEntryDecodeErrors(t *testing.T) {
	tests := []struct {
		name, raw string
		steps     int
		wantErr   bool
	}{
		{"unknown key", `{"type":"a","extra":{"x":[1,2]},"steps":[{"id":"s"}]}`, 1, false},
		{"null steps", `{"type":"a","steps":null}`, 0, false},
		{"steps not a list", `{"type":"a","steps":{"id":"s"}}`, 0, true},
		{"a step not an object", `{"type":"a","steps":[1]}`, 0, true},
		{"not an object", `[1]`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e expansionEntry
			err := json.Unmarshal([]byte(tt.raw), &e)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, e.Steps, tt.steps)
		})
	}
}

// An expansion is encoded as json.Marshal encodes it, byte for byte: the
// snapshot's hash is its content's.
func TestExpansionEncodesAsMarshal(t *testing.T) {
	yes := true
	steps := []*model.Step{
		{ID: "a@1", Kind: "shell", Name: "a <&>", Task: "a", Node: "1", Condition: `yaql: $.x = "<b>"`,
			Spec: model.Spec{"cmd": "echo <&> \u2028", "n": 3, "f": 1.5, "list": []any{"x", nil, true}}, FailOnError: &yes},
		{ID: "b@1", Kind: "puppet", Name: "b", Deps: []string{"a@1"}, AnyOf: [][]string{{"a@1"}}, Meta: model.Meta{Noop: true}},
	}
	tests := []struct {
		name string
		doc  expansionDoc
	}{
		{"empty", expansionDoc{}},
		{"no types", expansionDoc{Cluster: "c", Types: []expansionEntry{}}},
		{"subsets", expansionDoc{Cluster: "c<1>", Nodes: []string{"1", "2"}, Tasks: []string{"a"}, Types: []expansionEntry{
			{Type: "default", Graph: json.RawMessage(`{ "tasks" : [ {"id": "a<b>"} ] }`), Steps: steps},
		}}},
		{"empty subsets, types without steps or graph", expansionDoc{Cluster: "c", Nodes: []string{}, Types: []expansionEntry{
			{Type: "a", Graph: json.RawMessage(`{}`)}, {Type: "b", Steps: []*model.Step{}}, {Type: "c", Steps: steps[:1]},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.doc)
			require.NoError(t, err)
			got, err := tt.doc.encode()
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}
