package yaql

import (
	"fmt"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// Deployment is a node's deployment data, as Fuel's astute.yaml had it, in
// the three forms expressions read.
type Deployment struct {
	// Data is `$`: Common with Node merged over it.
	Data map[string]any
	// Node is `$node`: what belongs to the node alone.
	Node map[string]any
	// Common is `$common`: what every node of the cluster shares.
	Common map[string]any
	// Models are the models of legacy conditions.
	Models map[string]any
}

// Input returns the input of an expression over this data, with old the
// data of the node's last successful run (nil: none).
func (d *Deployment) Input(old map[string]any) Input {
	return Input{
		New: d.Data, Old: old, HasOld: old != nil,
		Vars:   map[string]any{"node": d.Node, "common": d.Common},
		Models: d.Models,
	}
}

// DeploymentData builds a node's deployment data from its cluster, the
// cluster's release (may be nil) and the node. Its shape:
//
//	Common ($common):
//	  every section of Cluster.Settings, each {value: v} attribute read as
//	  v and the "common" section's attributes lifted to the top, as
//	  nailgun did with editable attributes (so settings
//	  {storage: {objects_ceph: {value: true}}} read $.storage.objects_ceph,
//	  and {common: {debug: {value: true}}} read $.debug)
//	  cluster:            {id, name}                (unless settings have it)
//	  openstack_version:  the release's version     (when there is one)
//	  network_metadata:
//	    nodes: {<node name>: {uid, name, fqdn, node_roles, network_roles}}
//	           for every node (network_roles from its attributes, if any)
//	    vips:  settings' network_metadata.vips or vips, else {}
//	  nodes:  [{uid, name, fqdn, role}] one entry per node and role
//	Node ($node):
//	  uid (the node id), name, fqdn (attributes' fqdn, else the name),
//	  roles and node_roles (the node's roles), facts (what the node's
//	  agent reported of its host, model.NodeFacts.Map, when it did), then
//	  Node.Attributes merged over them (dicts deeply, anything else
//	  replaced)
//	Data ($): Common with Node merged over it the same way.
//
// Values are normalized (Normalize): numbers without a fraction are
// integers. Settings or attributes that cannot be normalized are an error.
func DeploymentData(c *model.Cluster, rel *model.Release, n *model.Node) (*Deployment, error) {
	cd, err := NewClusterDeployment(c, rel)
	if err != nil {
		return nil, err
	}
	return cd.Node(n)
}

// ClusterDeployment is the part of the deployment data every node of a
// cluster shares, built once for all of them (see DeploymentData). The
// data of the nodes it gives shares it: none of it may be modified.
type ClusterDeployment struct {
	common   map[string]any
	settings map[string]any
	cluster  map[string]any
	release  map[string]any
}

// NewClusterDeployment builds the shared part of a cluster's nodes'
// deployment data.
func NewClusterDeployment(c *model.Cluster, rel *model.Release) (*ClusterDeployment, error) {
	settings, err := Normalize(c.Settings)
	if err != nil {
		return nil, fmt.Errorf("cluster %s settings: %w", c.ID, err)
	}
	sm, _ := settings.(map[string]any)
	if sm == nil {
		sm = map[string]any{}
	}
	common := flattenSettings(sm)
	if _, ok := common["cluster"]; !ok {
		common["cluster"] = map[string]any{"id": c.ID, "name": c.Name}
	}
	if rel != nil && rel.Version != "" {
		common["openstack_version"] = rel.Version
	}
	nodes := map[string]any{}
	list := []any{}
	for i := range c.Nodes {
		cn := &c.Nodes[i]
		fqdn := nodeFQDN(cn)
		entry := map[string]any{
			"uid": cn.ID, "name": nodeKey(cn), "fqdn": fqdn, "node_roles": stringList(cn.Roles),
		}
		if nr, ok := cn.Attributes["network_roles"]; ok {
			v, err := Normalize(nr)
			if err != nil {
				return nil, fmt.Errorf("node %s network_roles: %w", cn.ID, err)
			}
			entry["network_roles"] = v
		}
		nodes[nodeKey(cn)] = entry
		for _, r := range cn.Roles {
			list = append(list, map[string]any{"uid": cn.ID, "name": nodeKey(cn), "fqdn": fqdn, "role": r})
		}
	}
	meta, _ := common["network_metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta = clone(meta).(map[string]any)
	meta["nodes"] = nodes
	if _, ok := meta["vips"]; !ok {
		if v, ok := common["vips"]; ok {
			meta["vips"] = v
		} else {
			meta["vips"] = map[string]any{}
		}
	}
	common["network_metadata"] = meta
	common["nodes"] = list

	release := map[string]any{}
	if rel != nil {
		release = map[string]any{"id": rel.ID, "name": rel.Name, "version": rel.Version}
	}
	clusterModel := map[string]any{"id": c.ID, "name": c.Name, "release_id": c.ReleaseID}
	if extra, ok := sm["cluster"].(map[string]any); ok {
		clusterModel = merge(clusterModel, extra)
	}
	return &ClusterDeployment{common: common, settings: sm, cluster: clusterModel, release: release}, nil
}

// Node returns a node's deployment data. Its Data shares the cluster's
// part (overlay) instead of copying it per node.
func (cd *ClusterDeployment) Node(n *model.Node) (*Deployment, error) {
	attrs, err := Normalize(n.Attributes)
	if err != nil {
		return nil, fmt.Errorf("node %s attributes: %w", n.ID, err)
	}
	node := map[string]any{
		"uid": n.ID, "name": nodeKey(n), "fqdn": nodeFQDN(n),
		"roles": stringList(n.Roles), "node_roles": stringList(n.Roles),
	}
	if n.Facts != nil {
		// The agent's report, under the operator's attributes: an
		// attribute "facts" (or facts.<key>) the operator set wins.
		facts, err := Normalize(n.Facts.Map())
		if err != nil {
			return nil, fmt.Errorf("node %s facts: %w", n.ID, err)
		}
		node["facts"] = facts
	}
	if am, ok := attrs.(map[string]any); ok {
		node = merge(node, am)
	}
	nodeModel := merge(map[string]any{"id": n.ID}, node)
	return &Deployment{
		Data: overlay(cd.common, node), Node: node, Common: cd.common,
		Models: map[string]any{"settings": cd.settings, "cluster": cd.cluster, "release": cd.release, "node": nodeModel},
	}, nil
}

// Join is a node's Data from its two parts, Common and Node, as
// ClusterDeployment.Node joins them; the result shares both.
func Join(common, node map[string]any) map[string]any { return overlay(common, node) }

// overlay returns top with over merged over it (dicts deeply, anything
// else replaced) without copying more of top than the paths over changes:
// the result shares the rest with top.
func overlay(top, over map[string]any) map[string]any {
	out := make(map[string]any, len(top)+len(over))
	for k, v := range top {
		out[k] = v
	}
	for k, v := range over {
		if om, ok := v.(map[string]any); ok {
			if tm, ok := out[k].(map[string]any); ok {
				out[k] = overlay(tm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// flattenSettings reads editable attributes as nailgun's
// merged_attrs_values did.
func flattenSettings(settings map[string]any) map[string]any {
	out := make(map[string]any, len(settings))
	for group, v := range settings {
		g, ok := v.(map[string]any)
		if !ok {
			out[group] = clone(v)
			continue
		}
		fg := make(map[string]any, len(g))
		for attr, av := range g {
			if m, ok := av.(map[string]any); ok {
				if value, has := m["value"]; has {
					fg[attr] = clone(value)
					continue
				}
			}
			fg[attr] = clone(av)
		}
		out[group] = fg
	}
	if common, ok := out["common"].(map[string]any); ok {
		delete(out, "common")
		for k, v := range common {
			out[k] = v
		}
	}
	return out
}

func nodeKey(n *model.Node) string {
	if n.Name != "" {
		return n.Name
	}
	return n.ID
}

func nodeFQDN(n *model.Node) string {
	if f, ok := n.Attributes["fqdn"].(string); ok && f != "" {
		return f
	}
	return nodeKey(n)
}

func stringList(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// merge merges src over dst (dicts deeply) and returns dst.
func merge(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = merge(clone(dm).(map[string]any), sm)
				continue
			}
		}
		dst[k] = clone(v)
	}
	return dst
}

// Clone deep-copies normalized data: what an evaluation returns may share
// parts of its input, so a caller that will change it copies it first.
func Clone(v any) any { return clone(v) }

// clone deep-copies normalized data (nested.MapAnyOrder copying every map
// and list).
func clone(v any) any {
	out, _ := nested.MapAnyOrder(v, "", func(_ nested.Path, v any) (any, error) { return v, nil })
	return out
}
