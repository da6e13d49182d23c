package fuellab

import (
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// Role is the role of node i (from 0) of a fleet as Fuel deploys a cloud:
// a primary controller, two controllers, then computes, Ceph OSDs and
// cinder nodes in the ratio 2:2:1 (eight nodes are the lab of
// graphs/fuel_release_test.go).
func Role(i int) string {
	switch i {
	case 0:
		return "primary-controller"
	case 1, 2:
		return "controller"
	}
	return [...]string{"compute", "compute", "ceph-osd", "ceph-osd", "cinder"}[(i-3)%5]
}

// roleTags are Fuel 9's role metadata: the tags each role stands for.
var roleTags = map[string][]any{
	"primary-controller": {"primary-controller", "primary-rabbitmq", "primary-database", "primary-keystone", "primary-neutron"},
	"controller":         {"controller", "rabbitmq", "database", "keystone", "neutron"},
}

// Nodes are n local nodes with ids "1" to "n", names "node-<id>", roles
// by Role and Fuel's per-node facts (fqdn, network roles and scheme,
// volumes, tags): what fuel-library's conditions and yaql read of a node.
// A caller serving some with agents sets their Mode.
func Nodes(n int) []model.Node {
	nodes := make([]model.Node, 0, n)
	for i := range n {
		id := fmt.Sprint(i + 1)
		ip := fmt.Sprintf("10.20.%d.%d", (i+3)/250, (i+3)%250+3)
		role := Role(i)
		attrs := map[string]any{
			"fqdn":          "node-" + id + ".domain.tld",
			"network_roles": map[string]any{"mgmt/messaging": ip, "mgmt/database": ip, "ex": nil},
			"node_volumes":  []any{map[string]any{"id": "sda", "size": 10240}},
			"network_scheme": map[string]any{
				"version":         "1.1",
				"transformations": []any{map[string]any{"action": "add-br", "name": "br-mgmt"}},
				"endpoints":       map[string]any{"br-mgmt": map[string]any{"IP": []any{ip + "/24"}}},
			},
		}
		if tags, ok := roleTags[role]; ok {
			attrs["tags"] = tags
		}
		nodes = append(nodes, model.Node{ID: id, Name: "node-" + id, Roles: []string{role}, Mode: model.NodeLocal, Attributes: attrs})
	}
	return nodes
}
