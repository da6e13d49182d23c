package model

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The answers keep the wire shape the OpenAPI file and the UI read.
func TestAnswersWireShape(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"an empty execution page keeps both members", ExecutionList{Executions: []Execution{}}, `{"executions":[],"nextPageToken":""}`},
		{"stacks", StackList{Stacks: []StackRecord{}}, `{"stacks":[]}`},
		{"releases", ReleaseList{}, `{"releases":null}`},
		{"plugins", PluginList{Plugins: []*Plugin{}}, `{"plugins":[]}`},
		{"clusters", ClusterList{Clusters: []*Cluster{}}, `{"clusters":[]}`},
		{"graphs", GraphMetaList{Graphs: []GraphMeta{}}, `{"graphs":[]}`},
		{"an error without running", ErrorBody{Error: ErrorInfo{Code: "not_found", Message: "no", Details: []ErrorDetail{}}},
			`{"error":{"code":"not_found","message":"no","details":[]}}`},
		{"health", Health{Status: HealthOK}, `{"status":"ok"}`},
		{"node token", NodeToken{Cluster: "c", Node: "n", Token: "t"}, `{"cluster":"c","node":"n","token":"t"}`},
		{"execution graph", ExecutionGraph{Steps: []StepDeps{}}, `{"steps":[]}`},
		{"execution steps", ExecutionSteps{Offset: 5, Entries: 7, Steps: []StepProgress{}}, `{"offset":5,"entries":7,"steps":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.v)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestErrorBodyReadsRunningBesideTheError(t *testing.T) {
	var b ErrorBody
	require.NoError(t, json.Unmarshal([]byte(`{"error":{"code":"conflict","message":"busy","details":[]},"running":"exec-1","plan":{}}`), &b))
	assert.Equal(t, "conflict", b.Error.Code)
	assert.Equal(t, "exec-1", b.Running, "the execution holding the stack is read by name; other members are ignored")
}
