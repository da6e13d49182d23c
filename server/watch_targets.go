package server

import (
	"context"
	"errors"
	"strings"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
)

// watchTarget is one watched resource: where it lives on this server's
// filesystem and the key a drift check limits itself with.
type watchTarget struct {
	path string // on this host; on an agent node, as the resource says
	key  string // planner.RecordKey
	// agent is the agent node the resource lives on (zero: this server).
	agent nodeRef
	// unit says path is a systemd unit's name, watched on D-Bus; host
	// that path is its host's own, not in its node's root (an agent
	// node's dpkg status file).
	unit, host bool
}

// nodeRef names a node of a cluster.
type nodeRef struct{ cluster, node string }

// How the resources of a kind are watched.
const (
	watchNone    = iota
	watchPath    // the resource's path, on its node
	watchPackage // dpkg's status file, on its node's host
	watchUnit    // its systemd unit's signals, on its node's host
)

// watchedKind says how a watcher watches a kind's resources.
func watchedKind(kind string) int {
	switch strings.ToLower(kind) {
	case kinds.KindFile, kinds.KindDirectory:
		return watchPath
	case kinds.KindPackage:
		return watchPackage
	case kinds.KindService:
		return watchUnit
	}
	return watchNone
}

// WatchStore is what the watcher reads of the store.
type WatchStore interface {
	WatchedStacks(ctx context.Context) ([]string, error)
	GetDrift(ctx context.Context, stackID string) (*store.DriftRecord, error)
	GetStack(ctx context.Context, id string) (*model.Stack, error)
	GetCluster(ctx context.Context, id string) (*model.Cluster, error)
}

// stackTargets lists the watched resources of a stack: files and
// directories on the control plane and on the local nodes of the stack's
// cluster (by their path on this host), and on its agent nodes (by the
// path the resource declares: the agent resolves it in its node root);
// packages (by dpkg's status file) and services (by unit) of their
// node's host: this one for the control plane and local nodes, the
// agent's for an agent node. Resources whose path leaves their node's
// root are skipped (skipped counts them: their checks say so). A stack whose drift record is gone or no longer
// watches has none (ok false). Cost: two or three store reads.
func stackTargets(ctx context.Context, st WatchStore, o WatchOptions, stackID string) (targets []watchTarget, skipped int, ok bool, err error) {
	rec, err := st.GetDrift(ctx, stackID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	if !rec.Watch {
		return nil, 0, false, nil
	}
	stack, err := st.GetStack(ctx, stackID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	local := map[string]bool{}
	if stack.ClusterID != "" {
		c, err := st.GetCluster(ctx, stack.ClusterID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, 0, false, err
		}
		if c != nil {
			for _, n := range c.Nodes {
				local[n.ID] = n.Mode == "" || n.Mode == model.NodeLocal
			}
		}
	}
	for _, r := range stack.Resources {
		how := watchedKind(r.Kind)
		if how == watchNone || r.ID == "" {
			continue
		}
		key := planner.RecordKey(r.Kind, r.PkgName, r.Node)
		node := providers.Node{Root: o.ControlRoot}
		if r.Node != "" {
			isLocal, known := local[r.Node]
			if !known {
				skipped++ // the node left the cluster: the check says so
				continue
			}
			if !isLocal {
				t := watchTarget{path: r.ID, key: key, agent: nodeRef{cluster: stack.ClusterID, node: r.Node}}
				switch how {
				case watchPackage:
					t.path, t.host = o.DpkgStatus, true
				case watchUnit:
					t.unit = true
				}
				targets = append(targets, t)
				continue
			}
			node = providers.Node{Name: r.Node, Root: o.NodeRoot(stack.ClusterID, r.Node)}
		}
		switch how {
		case watchPackage:
			targets = append(targets, watchTarget{path: o.DpkgStatus, key: key})
			continue
		case watchUnit:
			targets = append(targets, watchTarget{path: r.ID, key: key, unit: true})
			continue
		}
		host, err := node.Resolve(r.ID)
		if err != nil {
			skipped++ // the path leaves the node's root: the check says so
			continue
		}
		targets = append(targets, watchTarget{path: host, key: key})
	}
	return targets, skipped, true, nil
}
