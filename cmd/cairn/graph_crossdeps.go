package main

import (
	"fmt"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/yaql"
)

// nodesCrossDeps evaluates yaql cross dependencies for `graph show`
// against the deployment data the nodes file gives: each node's uid, name,
// roles and the cluster's network_metadata of every node, with no cluster
// settings and no earlier run (a server's dry-run reads the cluster's
// settings and history).
func nodesCrossDeps(nodes []model.Node) (graphs.CrossDepsFunc, error) {
	cd, err := yaql.NewClusterDeployment(&model.Cluster{Nodes: nodes}, nil)
	if err != nil {
		return nil, fmt.Errorf("deployment data: %w", err)
	}
	data := map[string]*yaql.Deployment{}
	exprs := map[string]*yaql.Expr{}
	return func(_ *model.Task, _, src, node string) (any, error) {
		d, ok := data[node]
		if !ok {
			n := &model.Node{ID: node, Name: node, Roles: []string{model.ControlPlane}}
			for i := range nodes {
				if nodes[i].ID == node || (nodes[i].ID == "" && nodes[i].Name == node) {
					n = &nodes[i]
				}
			}
			if d, err = cd.Node(n); err != nil {
				return nil, err
			}
			data[node] = d
		}
		x, ok := exprs[src]
		if !ok {
			if x, err = yaql.Parse(src); err != nil {
				return nil, err
			}
			exprs[src] = x
		}
		return x.Eval(d.Input(nil))
	}, nil
}
