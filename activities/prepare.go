package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// Prepare loads the package snapshot (and, for apply and dry-run, the stack
// record and the previous snapshot, to delete what left the package with its
// old spec), builds the steps, keeps them in the store and returns the plan
// of units the executor runs, on the cluster the stack's record allows
// (see model.Stack.TargetCluster).
func (a *Activities) Prepare(ctx context.Context, in contract.PrepareInput) (*contract.PreparedPlan, error) {
	if a.d.Packages == nil {
		return nil, configError("this worker cannot prepare packages (no package loader)")
	}

	if err := a.claimParams(ctx, in.ExecutionID, in.Params); err != nil {
		return nil, err
	}
	var stack *model.Stack
	if in.StackID != "" {
		s, err := a.d.Store.GetStack(ctx, in.StackID)
		if notFound(err) {
			return nil, configError(fmt.Sprintf("stack %q not found", in.StackID))
		}
		if err != nil {
			return nil, err
		}
		stack = s
	}
	clusterID := in.ClusterID
	if stack != nil {
		// The record is read here, under the stack's lock for an apply or
		// destroy: no other run moves the stack meanwhile.
		var err error
		if clusterID, err = stack.TargetCluster(in.ClusterID); err != nil {
			return nil, configError(err.Error())
		}
	}
	var nodes []model.Node
	if clusterID != "" {
		c, err := a.d.Store.GetCluster(ctx, clusterID)
		if notFound(err) {
			return nil, configError(fmt.Sprintf("cluster %q not found", clusterID))
		}
		if err != nil {
			return nil, err
		}
		nodes = c.Nodes
	}

	b := planner.NewBuilder(in.Mode)
	t0 := time.Now()
	var cur *LoadedPackage
	if in.Mode != contract.ModeDestroy {
		var err error
		if cur, err = a.loadSnapshot(ctx, in.SnapshotHash, nodes); err != nil {
			return nil, err
		}
		if err := b.AddCurrent(cur.Steps, cur.Catalogue, stack); err != nil {
			return nil, configError(err.Error())
		}
	}
	if stack != nil {
		if removed := b.Removed(stack); len(removed) > 0 {
			var old *planner.Previous
			if stack.SnapshotHash != "" && stack.SnapshotHash != in.SnapshotHash {
				pkg, err := a.loadSnapshot(ctx, stack.SnapshotHash, nodes)
				if err != nil {
					// Deletes then go by the recorded object ids alone.
					a.log.Warn("previous snapshot unreadable; deleting by recorded ids", "stack", stack.ID, "snapshot", stack.SnapshotHash, "error", err)
				} else {
					old = &planner.Previous{Steps: pkg.Steps, Catalogue: pkg.Catalogue}
				}
			}
			var curCat *kinds.Catalogue
			if cur != nil {
				curCat = cur.Catalogue
			}
			if err := b.AddDeletes(removed, old, curCat); err != nil {
				return nil, configError(err.Error())
			}
		}
	}
	t1 := time.Now()
	p, err := b.Plan(in.BatchSize)
	if err != nil {
		return nil, configError(err.Error())
	}
	if in.Mode == contract.ModeApply && cur != nil {
		if err := a.precheck(ctx, in.ExecutionID, cur.Package, p.Members); err != nil {
			return nil, err
		}
	}
	t2 := time.Now()
	if err := a.persist(ctx, in.ExecutionID, p.Units, p.Members); err != nil {
		return nil, err
	}
	if err := a.writeGrants(ctx, in.ExecutionID, clusterID, nodes, p.Units, p.Members); err != nil {
		return nil, err
	}
	a.log.Debug("prepared", "execution", in.ExecutionID, "steps", b.Len(), "units", len(p.Units),
		"load", t1.Sub(t0), "plan", t2.Sub(t1), "persist", time.Since(t2))
	plan := &contract.PreparedPlan{Steps: b.Len(), Deletes: b.Deletes(), Summary: b.Summary(), ClusterID: clusterID}
	if err := a.shard(ctx, in.ExecutionID, p.Units, in.ShardUnits, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// shard hands the units to the plan, split into shards kept in the store
// when they are more than one workflow runs (shardUnits, 0: the default).
func (a *Activities) shard(ctx context.Context, execID string, units []contract.Unit, shardUnits int, plan *contract.PreparedPlan) error {
	if shardUnits <= 0 {
		shardUnits = planner.DefaultShardUnits
	}
	if len(units) <= shardUnits {
		plan.Units = units
		return nil
	}
	shards := map[string][]byte{}
	for k, first := 0, 0; first < len(units); k, first = k+1, first+shardUnits {
		part := units[first:min(first+shardUnits, len(units))]
		raw, err := json.Marshal(part)
		if err != nil {
			return err
		}
		shards[contract.ShardKey(k)] = raw
		sh := contract.Shard{Index: k, First: first, Units: len(part)}
		for _, u := range part {
			sh.Steps += max(u.Count, 1)
		}
		plan.Shards = append(plan.Shards, sh)
	}
	return a.d.Store.PutStepDataBatch(ctx, execID, contract.DataShard, shards)
}

func (a *Activities) loadSnapshot(ctx context.Context, hash string, nodes []model.Node) (*LoadedPackage, error) {
	if hash == "" {
		return nil, configError("no package snapshot given")
	}
	key := cacheKey(hash, nodes)
	if pkg := a.parsed.get(key); pkg != nil {
		return pkg, nil
	}
	snap, err := a.d.Store.GetSnapshot(ctx, hash)
	if notFound(err) {
		return nil, configError(fmt.Sprintf("package snapshot %s not found", short(hash)))
	}
	if err != nil {
		return nil, err
	}
	if snap.Kind != snapshotKindPackage {
		return nil, configError(fmt.Sprintf("snapshot %s is a %q snapshot, not a package", short(hash), snap.Kind))
	}
	pkg, err := a.d.Packages.Load(ctx, snap.Content, nodes)
	if err != nil {
		return nil, configError(fmt.Sprintf("package snapshot %s: %v", short(hash), err))
	}
	a.parsed.put(key, pkg)
	return pkg, nil
}

// persist keeps the steps: single-step units one record per step, batch
// units one record holding their steps, and an index of all of them.
func (a *Activities) persist(ctx context.Context, execID string, units []contract.Unit, members [][]*planner.StoredStep) error {
	var steps []*planner.StoredStep
	for _, m := range members {
		steps = append(steps, m...)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Ord < steps[j].Ord })
	entries := make([]indexEntry, len(steps))
	for i, s := range steps {
		entries[i] = indexEntry{ID: s.ID, Kind: s.Kind, RecordKind: s.RecordKind, Name: s.Name, Node: s.Node, Associations: s.Associations, Delete: s.Delete,
			Deps: planner.Deps(&s.Step)}
	}
	index, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	singles := map[string][]byte{}
	batches := map[string][]byte{}
	for i, u := range units {
		if u.Batch {
			raw, err := json.Marshal(members[i])
			if err != nil {
				return err
			}
			batches[contract.UnitKey(u.Index)] = raw
			continue
		}
		raw, err := json.Marshal(members[i][0])
		if err != nil {
			return err
		}
		singles[members[i][0].ID] = raw
	}
	if err := a.d.Store.PutStepDataBatch(ctx, execID, contract.DataStep, singles); err != nil {
		return err
	}
	if err := a.d.Store.PutStepDataBatch(ctx, execID, contract.DataUnit, batches); err != nil {
		return err
	}
	return a.d.Store.PutStepData(ctx, execID, contract.IndexKey, contract.DataIndex, index)
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
