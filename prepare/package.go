package prepare

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/store"
)

// PackageStore is what preparing a package run reads besides snapshots:
// the stack's record and its cluster's nodes (store.Store has it).
type PackageStore interface {
	GetStack(ctx context.Context, id string) (*model.Stack, error)
	GetCluster(ctx context.Context, id string) (*model.Cluster, error)
}

// PackageRun is a package run to plan: an apply, dry-run or destroy of
// the snapshot on a stack (none: a run without a record), on a cluster
// ("" with a stack: the one the stack recorded).
type PackageRun struct {
	Mode         contract.Mode
	StackID      string
	ClusterID    string
	SnapshotHash string
	// BatchSize bounds a unit's steps (0: planner.UnitSize's for the
	// run's mode and steps at Parallelism units at once, 0: the
	// default).
	BatchSize   int
	Parallelism int
	// Only limits the run to these resources (planner.RecordKey) and
	// what they depend on, with no deletes (see LimitSteps); empty: all.
	Only []string
}

// PackagePlan is a package run planned into units.
type PackagePlan struct {
	*planner.Plan
	// Current is the package run (nil for a destroy). Of a package too
	// large to be kept for later runs, only the resources' identities and
	// positions are left (see LoadedPackage.release).
	Current *LoadedPackage
	// ClusterID is the cluster the run goes to and Nodes its nodes.
	ClusterID string
	Nodes     []model.Node
	// Steps counts the plan's steps, Deletes those that delete, and
	// Summary says what the plan does.
	Steps, Deletes int
	Summary        string
}

// Package plans a package run: it reads the stack's record and the
// cluster the record allows (see model.Stack.TargetCluster), loads the
// snapshot onto the cluster's nodes and, for a stack, adds a delete for
// each recorded resource that left the package, with the spec of the
// previous snapshot when it still loads (else by the recorded object ids
// alone). Run it under the stack's lock for an apply or destroy: the
// record must not move meanwhile. Problems of the run are a PackageError;
// store failures are returned as they are. Cost: two store reads, one or
// two snapshot loads (see Snapshots) and the planner's ordering.
func Package(ctx context.Context, st PackageStore, snaps *Snapshots, run PackageRun, log *slog.Logger) (*PackagePlan, error) {
	stack, err := runStack(ctx, st, run.StackID)
	if err != nil {
		return nil, err
	}
	out := &PackagePlan{ClusterID: run.ClusterID}
	if stack != nil {
		if out.ClusterID, err = stack.TargetCluster(run.ClusterID); err != nil {
			return nil, packageError(err.Error())
		}
	}
	if out.ClusterID != "" {
		c, err := st.GetCluster(ctx, out.ClusterID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, packageError(fmt.Sprintf("cluster %q not found", out.ClusterID))
		}
		if err != nil {
			return nil, err
		}
		out.Nodes = c.Nodes
	}
	b := planner.NewBuilder(run.Mode)
	if run.Mode != contract.ModeDestroy {
		if out.Current, err = snaps.Load(ctx, run.SnapshotHash, out.Nodes); err != nil {
			return nil, err
		}
		out.Current.settle()
		steps := out.Current.Steps
		if len(run.Only) > 0 {
			steps = LimitSteps(steps, run.Only)
		}
		if err := b.AddCurrent(steps, out.Current.Catalogue, stack); err != nil {
			return nil, packageError(err.Error())
		}
		// A large package is its caller's alone (Snapshots keeps small
		// ones): what the plan copied of it can go before the plan is made
		// and kept.
		out.Current.release()
		out.Current.settle()
	}
	if stack != nil && len(run.Only) == 0 {
		if err := addDeletes(ctx, b, snaps, stack, run.SnapshotHash, out, log); err != nil {
			return nil, err
		}
	}
	if out.Plan, err = b.Plan(planner.UnitSize(run.BatchSize, run.Mode, b.Len(), run.Parallelism)); err != nil {
		return nil, packageError(err.Error())
	}
	out.Steps, out.Deletes, out.Summary = b.Len(), b.Deletes(), b.Summary()
	return out, nil
}

// runStack reads the run's stack (nil without one).
func runStack(ctx context.Context, st PackageStore, id string) (*model.Stack, error) {
	if id == "" {
		return nil, nil
	}
	s, err := st.GetStack(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, packageError(fmt.Sprintf("stack %q not found", id))
	}
	return s, err
}

// addDeletes adds the deletes of what left the stack's package.
func addDeletes(ctx context.Context, b *planner.Builder, snaps *Snapshots, stack *model.Stack, hash string, p *PackagePlan, log *slog.Logger) error {
	removed := b.Removed(stack)
	if len(removed) == 0 {
		return nil
	}
	var old *planner.Previous
	if stack.SnapshotHash != "" && stack.SnapshotHash != hash {
		pkg, err := snaps.Load(ctx, stack.SnapshotHash, p.Nodes)
		if err != nil {
			// Deletes then go by the recorded object ids alone.
			log.Warn("previous snapshot unreadable; deleting by recorded ids", "stack", stack.ID, "snapshot", stack.SnapshotHash, "error", err)
		} else {
			old = &planner.Previous{Steps: pkg.Steps, Catalogue: pkg.Catalogue}
		}
	}
	var curCat *kinds.Catalogue
	if p.Current != nil {
		curCat = p.Current.Catalogue
	}
	if err := b.AddDeletes(removed, old, curCat); err != nil {
		return packageError(err.Error())
	}
	return nil
}
