package stepdata

import (
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
	"github.com/cairn-io/cairn/prepare"
)

// Converged is what the stack record needs of a step's Outputs record:
// the object's id and whether it was deleted (decoding only these keeps
// large outputs out of the way).
type Converged struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// StackRun is what an apply or destroy of a stack did: its steps in
// package order (the execution's index), the steps that converged, those
// a rollback undid, and the snapshot and cluster it ran.
type StackRun struct {
	Steps        []prepare.IndexEntry
	Converged    map[string]Converged
	Undone       map[string]Compensated
	Destroy      bool
	SnapshotHash string
	ClusterID    string
	// Partial says the run covered some of the stack's resources: the
	// others keep their entries, where they were.
	Partial bool
}

// StackRecord is the record run leaves on stack, in package order: each
// resource that converged with its object id; a resource that failed or
// never ran keeps its previous entry, if it had one; a removed resource
// stays recorded until its delete succeeded. After a rollback a step whose
// change was undone keeps its previous entry, under the new id when the
// undo recreated its object, and the stack keeps its previous snapshot and
// cluster. A destroy that left nothing clears the snapshot and cluster.
// Cost: O(steps + recorded resources).
func StackRecord(stack *model.Stack, run StackRun) (resources []model.StackResource, hash, cluster string) {
	// previous is a resource's entry before the run, under the id its
	// compensation gave it if it was recreated.
	previous := func(r model.StackResource, step string) model.StackResource {
		if rec, ok := run.Undone[step]; ok && rec.Recreated != "" {
			r.ID = rec.Recreated
		}
		return r
	}
	prev := map[string]model.StackResource{}
	for _, r := range stack.Resources {
		prev[planner.RecordKey(r.Kind, r.PkgName, r.Node)] = r
	}
	resources = make([]model.StackResource, 0, len(run.Steps))
	for _, s := range run.Steps {
		if s.Delete {
			continue
		}
		old, had := prev[planner.RecordKey(s.Kind, s.Name, s.Node)]
		o, ok := run.Converged[s.ID]
		if _, wasUndone := run.Undone[s.ID]; wasUndone {
			ok = false // the change was undone: what was there before stands
		}
		switch {
		case ok:
			resources = append(resources, model.StackResource{
				Kind: s.RecordKind, ID: o.ID, PkgName: s.Name, Node: s.Node,
				Associations: associations(s.Associations, had && old.Associations != nil),
			})
		case had:
			resources = append(resources, previous(old, s.ID))
		}
	}
	for _, s := range run.Steps {
		if !s.Delete {
			continue
		}
		_, wasUndone := run.Undone[s.ID]
		if o, ok := run.Converged[s.ID]; ok && o.Deleted && !wasUndone {
			continue
		}
		if old, had := prev[planner.RecordKey(s.Kind, s.Name, s.Node)]; had {
			resources = append(resources, previous(old, s.ID))
		}
	}
	if run.Partial {
		resources = keepOthers(stack.Resources, resources, run.Steps)
	}
	hash, cluster = run.SnapshotHash, run.ClusterID
	if len(run.Undone) > 0 && !run.Destroy {
		// Rolled back: the previous package stands where it was.
		hash, cluster = stack.SnapshotHash, stack.ClusterID
	}
	if run.Destroy {
		hash, cluster = "", ""
		if len(resources) > 0 {
			hash, cluster = stack.SnapshotHash, run.ClusterID
		}
	}
	return resources, hash, cluster
}

// keepOthers is the record of a partial run: the stack's entries in
// their order, those of the run's resources replaced by what the run
// left (dropped when it left none), then the run's new resources.
func keepOthers(before, ran []model.StackResource, steps []prepare.IndexEntry) []model.StackResource {
	inRun := make(map[string]bool, len(steps))
	for _, s := range steps {
		inRun[planner.RecordKey(s.Kind, s.Name, s.Node)] = true
	}
	left := make(map[string]model.StackResource, len(ran))
	for _, r := range ran {
		left[planner.RecordKey(r.Kind, r.PkgName, r.Node)] = r
	}
	out := make([]model.StackResource, 0, len(before)+len(ran))
	for _, r := range before {
		k := planner.RecordKey(r.Kind, r.PkgName, r.Node)
		if !inRun[k] {
			out = append(out, r)
		} else if n, ok := left[k]; ok {
			out = append(out, n)
			delete(left, k)
		}
	}
	for _, r := range ran {
		if _, ok := left[planner.RecordKey(r.Kind, r.PkgName, r.Node)]; ok {
			out = append(out, r)
		}
	}
	return out
}

// associations is the record of a resource's associations: nil when it
// never had any, empty when it had some before and has none now.
func associations(refs []model.Ref, hadBefore bool) []model.Association {
	if len(refs) == 0 {
		if hadBefore {
			return []model.Association{}
		}
		return nil
	}
	out := make([]model.Association, 0, len(refs))
	for _, r := range refs {
		out = append(out, model.Association{Kind: r.Kind, PkgName: r.Name})
	}
	return out
}
