package graphs

import (
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// Fuel deployed a graph "task-based" (Fuel 9's LCM) when every task of it,
// stages and groups aside, had version 2.0.0 or later, as fuel-library's
// release graph has: then a group only chose the nodes of its members,
// which ran as their own requires, required_for and cross dependencies
// order them, every role at once. Older graphs ran group after group
// (granular deployment): a group's ordering held for its members. Cairn
// follows the same rule: in a task-based graph a member does not inherit
// its group's dependencies (the group step still waits for its members);
// otherwise it does.

// taskBased reports whether g is deployed task-based.
func taskBased(tasks []*model.Task) bool {
	n := 0
	for _, t := range tasks {
		if t.Type == model.TaskGroup || t.Type == model.TaskStage {
			continue
		}
		if versionMajor(t.Version) < 2 {
			return false
		}
		n++
	}
	return n > 0
}

// versionMajor is the major number of a version such as "2.1.0"; 1 when
// absent or unreadable (Fuel's default version is 1.0.0).
func versionMajor(v string) int {
	major, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 1
	}
	return n
}
