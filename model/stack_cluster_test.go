package model

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStackTargetCluster(t *testing.T) {
	onNode := []StackResource{{Kind: "File", ID: "/a", PkgName: "a"}, {Kind: "File", ID: "/b", PkgName: "b", Node: "n1"}}
	local := []StackResource{{Kind: "File", ID: "/a", PkgName: "a"}}
	tests := []struct {
		name      string
		recorded  string
		resources []StackResource
		requested string
		want      string
		refused   bool
	}{
		{"none recorded, none asked", "", nil, "", "", false},
		{"none recorded, one asked", "", onNode, "c2", "c2", false},
		{"recorded, none asked", "c1", onNode, "", "c1", false},
		{"recorded, the same asked", "c1", onNode, "c1", "c1", false},
		{"recorded with resources on nodes, another asked", "c1", onNode, "c2", "", true},
		{"recorded without resources on nodes, another asked", "c1", local, "c2", "c2", false},
		{"recorded, nothing left, another asked", "c1", nil, "c2", "c2", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &Stack{ID: "s1", ClusterID: tc.recorded, Resources: tc.resources}
			got, err := st.TargetCluster(tc.requested)
			if !tc.refused {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			var mismatch *ClusterMismatchError
			require.True(t, errors.As(err, &mismatch), "%v", err)
			assert.Equal(t, ClusterMismatchError{StackID: "s1", Recorded: tc.recorded, Requested: tc.requested}, *mismatch)
			assert.Contains(t, err.Error(), `"c1"`)
			assert.Contains(t, err.Error(), `"c2"`)
		})
	}
}
