package yaql

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// memoCluster is a cluster of n nodes as of version v: each version
// changes some settings, one node's network scheme and (from version 1)
// adds two nodes, and from version 2 gives a node other roles, so the last run's data
// differs from the new in the ways Fuel's change functions look for.
func memoCluster(n, v int) *model.Cluster {
	roles := []string{"primary-controller", "controller", "controller", "compute", "compute", "ceph-osd", "cinder"}
	c := &model.Cluster{ID: "c1", Name: "lab", Settings: map[string]any{
		"common":     map[string]any{"debug": map[string]any{"value": v%2 == 1}},
		"storage":    map[string]any{"objects_ceph": map[string]any{"value": true}, "volumes_ceph": map[string]any{"value": v > 1}},
		"public_ssl": map[string]any{"hostname": map[string]any{"value": fmt.Sprintf("public-%d.example", v/2)}},
		"repo_setup": map[string]any{"repos": []any{map[string]any{"name": "base", "priority": 1000 + v}}},
		"network_metadata": map[string]any{
			"vips": map[string]any{"vrouter": map[string]any{"ipaddr": "10.0.0.2"}, "management": map[string]any{"ipaddr": fmt.Sprintf("10.0.0.%d", 3+v%2)}},
		},
	}}
	if v > 0 {
		n += 2
	}
	for i := range n {
		id := fmt.Sprint(i + 1)
		ip := fmt.Sprintf("10.20.%d.%d", i/200, i%200+3)
		scheme := map[string]any{
			"version":   "1.1",
			"endpoints": map[string]any{"br-mgmt": map[string]any{"IP": []any{ip + "/24"}}},
		}
		if i == v {
			scheme["version"] = "1.2"
		}
		role := roles[i%len(roles)]
		if i == 10+v/2 {
			role = "mongo"
		}
		c.Nodes = append(c.Nodes, model.Node{ID: id, Name: "node-" + id, Roles: []string{role},
			Attributes: map[string]any{
				"fqdn":           "node-" + id + ".domain.tld",
				"network_roles":  map[string]any{"mgmt/database": ip},
				"network_scheme": scheme,
			}})
	}
	return c
}

// memoInputs are the inputs of every node of the cluster at version v,
// each with the data of version v-1 as its last run (none for a node the
// older version lacks, and none at all at version 0); with mixed, the
// even nodes' last run is version v-2 instead (none below 0).
func memoInputs(t *testing.T, n, v int, mixed bool) map[string]Input {
	t.Helper()
	cur := memoCluster(n, v)
	cd, err := NewClusterDeployment(cur, nil)
	require.NoError(t, err)
	type version struct {
		c  *model.Cluster
		cd *ClusterDeployment
	}
	olds := map[int]version{}
	for _, ov := range []int{v - 1, v - 2} {
		if ov >= 0 {
			oc := memoCluster(n, ov)
			ocd, err := NewClusterDeployment(oc, nil)
			require.NoError(t, err)
			olds[ov] = version{oc, ocd}
		}
	}
	out := map[string]Input{}
	for i := range cur.Nodes {
		node := &cur.Nodes[i]
		d, err := cd.Node(node)
		require.NoError(t, err)
		ov := v - 1
		if mixed && i%2 == 0 {
			ov = v - 2
		}
		var old map[string]any
		if prev, ok := olds[ov]; ok {
			if pn := prev.c.Node(node.ID); pn != nil {
				od, err := prev.cd.Node(pn)
				require.NoError(t, err)
				old = od.Data
			}
		}
		out[node.ID] = d.Input(old)
	}
	return out
}

// memoExprs are expressions of fuel-library's shape over the nodes' data,
// and some that must not be shared between nodes (they read $node or the
// node's own data inside a predicate).
var memoExprs = []string{
	"changed($)",
	"changed($.network_metadata)",
	"changed($.network_metadata.nodes)",
	"changedAny($.network_scheme, $.network_metadata)",
	"changedAny($.storage, $.network_metadata.nodes.values().where(('controller' in $.node_roles) or ('primary-controller' in $.node_roles)), ('primary-controller' in $.roles))",
	"changedAll($.network_metadata.nodes, $.debug)",
	"$.uid in added($.network_metadata.nodes.values()).uid",
	"$.uid in added($.nodes).uid",
	`{"deleted_nodes" => coalesce(deleted($.network_metadata.nodes.values().fqdn), [])}.toYaml()`,
	"$.network_metadata.nodes.values().where($.uid = new($.uid)).name.first()",
	"$.network_metadata.nodes.values().where($.uid = $node.uid).fqdn",
	"$.network_metadata.nodes.values().select($.fqdn).where($ != $common.cluster.name).len()",
	"((len(old($)) > 0) or $.debug) and changed($.public_ssl.hostname)",
	"old($.network_metadata.nodes.values()).len()",
	"deleted($.nodes).len()",
	"$.network_metadata.nodes.keys().len() + len($.nodes)",
	"switch($.network_metadata.nodes.values().len() > 30 => 3, true => 1)",
	"$.nodes.where($.role = 'controller').uid.toSet().len()",
	"$.network_metadata.nodes.values().node_roles.flatten().distinct()",
	"$.network_metadata.nodes.values().where($.missing_key).len()",
	"changed($.repo_setup) or changed($.get('run_ping_checker'))",
	"$.network_metadata.nodes.get('node-3').fqdn",
	"$.network_metadata.nodes.values().where($.node_roles.any($.matches('controller'))).len()",
	"$.name.matches('(')",
}

// Evaluations through one memo, node after node, give what evaluations
// without one give: the same values and the same errors, on a first run
// (no old data) and on later runs whose old data differs, from one run
// or, node by node, from either of two.
func TestMemoEvaluatesAsWithout(t *testing.T) {
	for _, v := range []int{0, 1, 2, 3, -3} {
		mixed := v < 0
		v = max(v, -v)
		inputs := memoInputs(t, 40, v, mixed)
		for _, src := range memoExprs {
			t.Run(fmt.Sprintf("v%d mixed %v %s", v, mixed, src), func(t *testing.T) {
				x, err := Parse(src)
				require.NoError(t, err)
				memo := NewMemo()
				for id, in := range inputs {
					want, wantErr := x.Eval(in)
					in.Memo = memo
					got, gotErr := x.Eval(in)
					if wantErr != nil {
						require.Error(t, gotErr, "node %s", id)
						assert.Equal(t, wantErr.Error(), gotErr.Error(), "node %s", id)
						continue
					}
					require.NoError(t, gotErr, "node %s", id)
					assert.Equal(t, want, got, "node %s", id)
				}
			})
		}
	}
}

// What an expression computes from the data every node shares is computed
// once for the cluster, not once per node: the work of evaluating it on
// every node grows with the nodes, not with their square.
func TestMemoComputesSharedDataOnce(t *testing.T) {
	tests := []struct {
		src string
		// computed: what the memo computes in all, on any number of nodes
		computed int
	}{
		{"changed($.network_metadata.nodes)", 1},
		// values() new and old, and the difference (empty: its .uid
		// costs nothing to remember)
		{"$.uid in added($.network_metadata.nodes.values()).uid", 3},
		// values() and where() new and old, and their comparison
		{"changedAny($.storage, $.network_metadata.nodes.values().where($.uid != '0'))", 5},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			x, err := Parse(tt.src)
			require.NoError(t, err)
			for _, n := range []int{40, 120} {
				memo := NewMemo()
				for _, in := range memoInputs(t, n, 2, false) {
					in.Memo = memo
					_, err := x.Eval(in)
					require.NoError(t, err)
				}
				assert.Equal(t, tt.computed, memo.computed, "%d nodes", n)
			}
		})
	}
}

// A remembered result charges the steps it cost: an evaluation stopped by
// its step limit stops at the same place, with the same error, with a
// memo as without, whatever the limit.
func TestMemoKeepsTheStepLimit(t *testing.T) {
	inputs := memoInputs(t, 40, 1, false)
	x, err := Parse("[$.network_metadata.nodes.values().where('compute' in $.node_roles), $.network_metadata.nodes.values().where('compute' in $.node_roles)].len()")
	require.NoError(t, err)
	full, err := x.Eval(inputs["1"])
	require.NoError(t, err)
	assert.Equal(t, int64(2), full)
	stopped := 0
	for steps := 1; steps < 600; steps += 7 {
		memo := NewMemo()
		for _, id := range []string{"1", "2", "3"} {
			in := inputs[id]
			in.Limits = Limits{Steps: steps}
			want, wantErr := x.Eval(in)
			in.Memo = memo
			got, gotErr := x.Eval(in)
			assert.Equal(t, want, got, "%d steps, node %s", steps, id)
			if wantErr == nil {
				assert.NoError(t, gotErr, "%d steps, node %s", steps, id)
				continue
			}
			stopped++
			require.ErrorIs(t, gotErr, ErrLimit, "%d steps, node %s", steps, id)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), "%d steps, node %s", steps, id)
		}
	}
	assert.Positive(t, stopped, "some limits stop the evaluation")
}

// A memo serves the evaluations of one set of limits: evaluations with
// other limits neither read nor fill it.
func TestMemoServesOneSetOfLimits(t *testing.T) {
	inputs := memoInputs(t, 40, 1, false)
	x, err := Parse("$.network_metadata.nodes.values().where('compute' in $.node_roles).len()")
	require.NoError(t, err)
	memo := NewMemo()
	in := inputs["1"]
	in.Memo = memo
	_, err = x.Eval(in)
	require.NoError(t, err)
	n := memo.Len()
	require.Positive(t, n)
	in.Limits = Limits{Steps: 50}
	_, err = x.Eval(in)
	require.ErrorIs(t, err, ErrLimit, "the smaller limit stops it, remembered or not")
	assert.Equal(t, n, memo.Len())
}
