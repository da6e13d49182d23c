package activities

import (
	"context"
	"time"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
)

// Prepare plans a package run (prepare.Package: the snapshot, and for an
// apply or dry-run on a stack the deletes of what left the package),
// prechecks an apply, keeps the plan's steps and the agents' grants in the
// store and returns the units the executor runs, on the cluster the
// stack's record allows (see model.Stack.TargetCluster).
func (a *Activities) Prepare(ctx context.Context, in contract.PrepareInput) (*contract.PreparedPlan, error) {
	if a.d.Packages == nil {
		return nil, configError("this worker cannot prepare packages (no package loader)")
	}
	if err := a.claimParams(ctx, in.ExecutionID, in.Params); err != nil {
		return nil, err
	}
	t0 := time.Now()
	p, err := prepare.Package(ctx, a.d.Store, a.snapshots, prepare.PackageRun{
		Mode: in.Mode, StackID: in.StackID, ClusterID: in.ClusterID, SnapshotHash: in.SnapshotHash, BatchSize: in.BatchSize, Parallelism: in.Parallelism,
		Only: in.Only,
	}, a.log)
	if err != nil {
		return nil, packageFailure(err)
	}
	t1 := time.Now()
	if in.Mode == contract.ModeApply && p.Current != nil {
		if err := a.precheck(ctx, in.ExecutionID, p.Current.Package, p.Members); err != nil {
			return nil, err
		}
	}
	t2 := time.Now()
	if err := a.persist(ctx, in.ExecutionID, p.Units, p.Members); err != nil {
		return nil, err
	}
	if err := a.writeGrants(ctx, in.ExecutionID, p.ClusterID, p.Nodes, p.Units, p.Members); err != nil {
		return nil, err
	}
	a.log.Debug("prepared", "execution", in.ExecutionID, "steps", p.Steps, "units", len(p.Units),
		"plan", t1.Sub(t0), "precheck", t2.Sub(t1), "persist", time.Since(t2))
	plan := &contract.PreparedPlan{Steps: p.Steps, Deletes: p.Deletes, Summary: p.Summary, ClusterID: p.ClusterID}
	if err := a.shard(ctx, in.ExecutionID, p.Units, in.ShardUnits, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// packageFailure is err as the activity's failure: a problem of the run
// (prepare.PackageError) is a config error no retry fixes; anything else
// is retried.
func packageFailure(err error) error {
	if prepare.IsPackageError(err) {
		return configError(err.Error())
	}
	return err
}

// persist keeps a plan's steps (prepare.Persist).
func (a *Activities) persist(ctx context.Context, execID string, units []contract.Unit, members [][]*planner.StoredStep) error {
	return prepare.Persist(ctx, a.d.Store, execID, units, members)
}

// writeGrants keeps the agents' grants of a plan (prepare.WriteGrants).
func (a *Activities) writeGrants(ctx context.Context, execID, cluster string, nodes []model.Node, units []contract.Unit, members [][]*planner.StoredStep) error {
	return prepare.WriteGrants(ctx, a.d.Store, execID, cluster, nodes, units, members)
}

// shard hands a plan's units to the plan, in shards when they are many
// (prepare.Shard).
func (a *Activities) shard(ctx context.Context, execID string, units []contract.Unit, shardUnits int, plan *contract.PreparedPlan) error {
	return prepare.Shard(ctx, a.d.Store, execID, units, shardUnits, plan)
}

// short is a snapshot hash for messages (prepare.ShortHash).
func short(hash string) string { return prepare.ShortHash(hash) }
