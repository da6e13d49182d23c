package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An apply or destroy whose input names no cluster runs its node steps on
// the cluster Prepare chose from the stack's record, and records that
// cluster.
func TestRunsGoToThePreparedCluster(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fakeActivities) error
	}{
		{"apply", func(f *fakeActivities) error {
			env := newEnv(t, f)
			env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 1))
			return env.GetWorkflowError()
		}},
		{"destroy", func(f *fakeActivities) error {
			env := newEnv(t, f)
			env.ExecuteWorkflow(DestroyWorkflow, DestroyInput{Settings: Settings{ExecutionID: "stack-s1"}, StackID: "s1"})
			return env.GetWorkflowError()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := unit(0, "motd@n1")
			u.Node = "n1"
			f := newFake(u)
			f.plan.ClusterID = "c1"
			require.NoError(t, tc.run(f))
			assert.Equal(t, NodeTaskQueue("c1", "n1"), f.queues["motd@n1"])
			require.Len(t, f.records, 1)
			assert.Equal(t, "c1", f.records[0].ClusterID)
			assert.Equal(t, tc.name == "destroy", f.records[0].Destroy)
		})
	}
}
