package model

import "fmt"

// ClusterMismatchError refuses to run a stack on another cluster than the
// one whose nodes hold its resources.
type ClusterMismatchError struct {
	StackID   string
	Recorded  string
	Requested string
}

func (e *ClusterMismatchError) Error() string {
	return fmt.Sprintf("stack %s has resources on the nodes of cluster %q, not of cluster %q: "+
		"run it on cluster %q (or without a cluster), or delete the stack there first and apply the package to a new stack on cluster %q",
		e.StackID, e.Recorded, e.Requested, e.Recorded, e.Requested)
}

// TargetCluster is the cluster an apply, dry-run or destroy of the stack
// runs on when requested is asked for ("" for none): the requested one,
// else the one the stack recorded. Another cluster than the recorded one
// is refused with a *ClusterMismatchError while a recorded resource is on
// a node: an apply there would leave it stranded on the old cluster's
// nodes, a destroy there would not reach it. Cost: one pass over the
// record.
func (s *Stack) TargetCluster(requested string) (string, error) {
	if requested == "" || requested == s.ClusterID {
		return s.ClusterID, nil
	}
	if s.ClusterID != "" {
		for _, r := range s.Resources {
			if r.Node != "" {
				return "", &ClusterMismatchError{StackID: s.ID, Recorded: s.ClusterID, Requested: requested}
			}
		}
	}
	return requested, nil
}
