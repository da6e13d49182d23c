package prepare

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// TaskRecord is kept per step of a graph execution
// (contract.DataGraphTask): which task of which type it runs on which node
// with which parameters, and whether an earlier execution stands for it.
type TaskRecord struct {
	Type     string `json:"type"`
	Task     string `json:"task"`
	TaskType string `json:"taskType"`
	Node     string `json:"node"` // node id, "master" for the control plane
	Digest   string `json:"digest"`
	// DoneBy is the retried execution that completed the step.
	DoneBy string `json:"doneBy,omitempty"`
	// RanIn is the execution whose run of the task on the node stands:
	// the execution names events and none of them re-runs the task.
	RanIn      string `json:"ranIn,omitempty"`
	Structural bool   `json:"structural,omitempty"`
}

// Recorded reports whether the step's successful run belongs in node
// history: it did something of its own in this execution.
func (r *TaskRecord) Recorded() bool {
	return !r.Structural && r.DoneBy == "" && r.RanIn == ""
}

// taskDigest identifies a task's parameters as they run: the kind its type
// maps to and its spec in that kind's form, with references unresolved (a
// secret's value never enters it).
func taskDigest(cat *kinds.Catalogue, t *model.Task) string {
	kind, spec := t.Type, map[string]any(t.Parameters)
	if base, s, _, err := cat.TaskSpec(t.Type, t.Parameters); err == nil {
		kind, spec = strings.ToLower(base), s
	}
	raw, err := json.Marshal(struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}{kind, spec})
	if err != nil {
		raw = []byte(fmt.Sprintf("%s %v", kind, spec))
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// taskNode is the node a graph step is for, by which node history is
// kept: its own node, or, for a task run on the control plane once per
// node (master_shell, the provisioning hooks), the node its id names
// ("netboot@n1"), so each node's run is recorded as that node's.
func taskNode(s *model.Step) string {
	if s.Node == "" {
		if _, n, ok := strings.Cut(s.ID, "@"); ok && n != "" {
			return n
		}
	}
	return nodeKey(s.Node)
}

func nodeKey(node string) string {
	if node == "" {
		return model.ControlPlane
	}
	return node
}

func isStructural(kind string) bool {
	switch strings.ToLower(kind) {
	case model.TaskGroup, model.TaskStage, model.TaskSkipped:
		return true
	}
	return false
}

// prefixStep puts a step of one of several graph types in its type's
// namespace: ids, dependencies, task and group.
func prefixStep(s *model.Step, prefix string) {
	s.ID = prefix + s.ID
	for i, d := range s.Deps {
		s.Deps[i] = prefix + d
	}
	for _, group := range s.AnyOf {
		for i, d := range group {
			group[i] = prefix + d
		}
	}
	if s.Task != "" {
		s.Task = prefix + s.Task
	}
	if s.Group != "" {
		s.Group = prefix + s.Group
	}
}
