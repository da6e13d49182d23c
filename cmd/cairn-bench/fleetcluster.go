package main

import (
	"fmt"

	"github.com/cairn-io/cairn/model"
)

// fleetRoles gives node i of a fleet its role as Fuel deploys a cloud: a
// primary controller, two controllers, then computes, Ceph OSDs and
// cinder nodes in the ratio 2:2:1 (eight nodes are the lab of
// graphs/fuel_release_test.go).
func fleetRoles(i int) string {
	switch i {
	case 0:
		return "primary-controller"
	case 1, 2:
		return "controller"
	}
	return [...]string{"compute", "compute", "ceph-osd", "ceph-osd", "cinder"}[(i-3)%5]
}

// fleetTags are Fuel 9's role metadata: the tags each role stands for.
var fleetTags = map[string][]any{
	"primary-controller": {"primary-controller", "primary-rabbitmq", "primary-database", "primary-keystone", "primary-neutron"},
	"controller":         {"controller", "rabbitmq", "database", "keystone", "neutron"},
}

// fleetNodes are n local nodes with Fuel's per-node facts (fqdn, network
// roles and scheme, volumes, tags): what fuel-library's conditions and
// yaql read of a node.
func fleetNodes(n int) []model.Node {
	nodes := make([]model.Node, 0, n)
	for i := range n {
		id := fmt.Sprint(i + 1)
		ip := fmt.Sprintf("10.20.%d.%d", (i+3)/250, (i+3)%250+3)
		role := fleetRoles(i)
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
		if tags, ok := fleetTags[role]; ok {
			attrs["tags"] = tags
		}
		nodes = append(nodes, model.Node{ID: id, Name: "node-" + id, Roles: []string{role}, Mode: model.NodeLocal, Attributes: attrs})
	}
	return nodes
}
