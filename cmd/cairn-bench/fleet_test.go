package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// graph: a@1 → b@1 → c@2, a@2 alone; d on the control plane after b@1.
func fleetTestGraph() []model.StepDeps {
	return []model.StepDeps{
		{ID: "c@2", DependsOn: []string{"b@1"}},
		{ID: "b@1", DependsOn: []string{"a@1", "gone@9"}},
		{ID: "a@1"},
		{ID: "a@2"},
		{ID: "d@master", DependsOn: []string{"b@1"}},
	}
}

func TestDepthOfCountsLevels(t *testing.T) {
	d, err := depthOf(fleetTestGraph())
	require.NoError(t, err)
	assert.Equal(t, 3, d, "a@1, b@1, c@2; a dependency outside the graph is not a level")

	_, err = depthOf([]model.StepDeps{{ID: "x", DependsOn: []string{"y"}}, {ID: "y", DependsOn: []string{"x"}}})
	assert.ErrorContains(t, err, "cycle")
}

func TestPlaybookKeepsOrderAndHosts(t *testing.T) {
	ran := []model.StepProgress{
		{ID: "c@2", Node: "2"}, {ID: "a@2", Node: "2"}, {ID: "b@1", Node: "1"}, {ID: "a@1", Node: "1"}, {ID: "d@master"},
	}
	tasks, hosts := playbookOrder(fleetTestGraph(), ran)
	assert.Equal(t, []string{"a", "b", "c", "d"}, tasks, "each task after the tasks its steps wait for")
	assert.ElementsMatch(t, []string{"1", "2"}, hosts["a"])
	assert.Equal(t, []string{model.ControlPlane}, hosts["d"], "a step without a node runs on the control plane")

	inventory, playbook := ansibleFiles(tasks, hosts)
	assert.Equal(t, "[fleet]\n"+
		"node-1 ansible_connection=local\n"+
		"node-2 ansible_connection=local\n"+
		"node-master ansible_connection=local\n"+
		"\n[fleet:vars]\nansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n", inventory)
	assert.Contains(t, playbook, "strategy: free")
	assert.Contains(t, playbook, "- name: \"c\"\n      command: \"true\"\n      changed_when: true\n      when: inventory_hostname in [\"node-2\"]\n")
	assert.Less(t, strings.Index(playbook, `"a"`), strings.Index(playbook, `"b"`))
	assert.Less(t, strings.Index(playbook, `"b"`), strings.Index(playbook, `"c"`))
}

func TestAnsibleRecapWantsEveryHost(t *testing.T) {
	recap := "PLAY RECAP ***\n" +
		"node-1                     : ok=3    changed=3    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0   \n" +
		"node-2                     : ok=2    changed=2    unreachable=0    failed=0    skipped=2    rescued=0    ignored=0   \n"
	assert.NoError(t, ansibleRecap(recap, 2))
	assert.ErrorContains(t, ansibleRecap(recap, 3), "2 of 3 hosts")
	assert.ErrorContains(t, ansibleRecap("skipping: no hosts matched\n", 2), "0 of 2 hosts")
	failed := strings.Replace(recap, "failed=0 ", "failed=1 ", 1)
	assert.ErrorContains(t, ansibleRecap(failed, 2), "failed=1")
}
