package dag

// tolerance counts failures against tolerance groups (Builder.Tolerate),
// as Fuel's fault_tolerance does: a group tolerates failures of up to its
// limit distinct members, and a second failure of a member already counted
// costs nothing. Groups and members are numbered in the order first seen;
// maps serve lookups only, never iteration.
//
// Cost: O(1) per vertex added and per failure counted.
type tolerance struct {
	groupOf  []int32 // vertex → group, -1 for none
	memberOf []int32 // vertex → member
	groups   map[string]int32
	members  map[string]int32
	limit    []int
	failed   []int             // distinct failed members per group
	counted  map[[2]int32]bool // (group, member) already failed
	n        int
}

func newTolerance(n int) tolerance { return tolerance{n: n} }

func (t *tolerance) add(v int, group, member string, limit int) {
	if t.groups == nil {
		t.groups, t.members, t.counted = map[string]int32{}, map[string]int32{}, map[[2]int32]bool{}
		t.groupOf, t.memberOf = make([]int32, t.n), make([]int32, t.n)
		for i := range t.groupOf {
			t.groupOf[i] = -1
		}
	}
	g, ok := t.groups[group]
	if !ok {
		g = int32(len(t.limit))
		t.groups[group] = g
		t.limit = append(t.limit, limit)
		t.failed = append(t.failed, 0)
	}
	t.limit[g] = min(t.limit[g], limit)
	m, ok := t.members[member]
	if !ok {
		m = int32(len(t.members))
		t.members[member] = m
	}
	t.groupOf[v], t.memberOf[v] = g, m
}

// count records a failure of v and reports whether v's group still
// tolerates it; a vertex outside any group is never tolerated.
func (t *tolerance) count(v int) bool {
	if t.groupOf == nil || t.groupOf[v] < 0 {
		return false
	}
	g := t.groupOf[v]
	key := [2]int32{g, t.memberOf[v]}
	if !t.counted[key] {
		t.counted[key] = true
		t.failed[g]++
	}
	return t.failed[g] <= t.limit[g]
}

// Failures reports how many distinct members of tolerance group group
// failed so far and how many it tolerates; ok is false for an unknown
// group. O(1).
func (s *Scheduler) Failures(group string) (failed, limit int, ok bool) {
	g, ok := s.tol.groups[group]
	if !ok {
		return 0, 0, false
	}
	return s.tol.failed[g], s.tol.limit[g], true
}
