package graphs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// ExpandOptions narrows an expansion to part of a cluster or a graph.
type ExpandOptions struct {
	// Nodes runs the graph on these nodes only (ids or names; "master" is
	// the control plane). Empty means every node.
	Nodes []string
	// Tasks runs only these tasks; every other task becomes a skipped step
	// so the edges through it still hold. Empty means every task.
	Tasks []string
	// Catalogue maps task types onto kinds; nil means kinds.Builtin().
	Catalogue *kinds.Catalogue
	// CrossDeps evaluates cross dependencies written as yaql, per node.
	// Nil leaves them out: without a node's deployment data there is
	// nothing to evaluate them against.
	CrossDeps CrossDepsFunc
}

// Expand turns a merged graph into executor steps on a cluster's nodes,
// with Fuel semantics:
//
//   - Node selection: a task runs on the nodes its roles select ('*' every
//     node, '/regex/' nodes with a role matching it from the start, as
//     Python's re.match, 'master' the control plane, otherwise nodes having
//     that role) plus the nodes of each group it belongs to (listed in its
//     `groups`, or naming it in the group task's `tasks`), which are the
//     nodes the group task's roles select. A task with neither roles nor
//     groups runs on the control plane. A stage task runs once, on the
//     control plane.
//   - One step per (task, node), ID "task@node" ("task@master" on the
//     control plane, whose Step.Node is ""). Step.Task is the task id;
//     Condition, FailOnError, Strategy (one_by_one = 1, amount = N) and the
//     node's Group are copied.
//   - Kind is the catalogue kind the task type maps to (shell → exec,
//     upload_file → file, puppet → exec) and Spec the task's parameters in
//     that kind's form (kinds.Catalogue.TaskSpec, e.g. shell's cmd becomes
//     exec's command); the settings the parameters carry (retries) and the
//     task's meta become Meta. Group and stage steps are structural.
//   - requires / required_for link the copies on the same node. When the
//     other task has no copy on that node: a stage links its single copy;
//     a group, or any task when this side is a stage, links every copy
//     (stages and groups are cluster-wide ordering points); otherwise
//     there is no edge.
//   - cross_depends links every copy of the named tasks (name may be
//     /regex/) on the nodes its role selects (default all; "self" is the
//     step's own node), the step itself excepted. Policy all (default)
//     makes each a dependency; policy any makes them one AnyOf group.
//     cross_depended_by is the reverse: those copies depend on this step
//     (with any, each gets an AnyOf group of this task's copies). Written
//     as yaql, either is evaluated on each of the task's nodes through
//     opts.CrossDeps and links that node's copy.
//   - A task with `tags` (Fuel 9) runs on the nodes having one of them
//     (expand_tags.go) instead.
//   - A `groups` entry may be a /regex/: the task runs on the nodes of
//     every group task whose id it matches (from the start), as Fuel's
//     task-based deployment read groups (as roles), without joining the
//     groups' ordering. A requires, required_for
//     or groups entry naming no task of the graph is dropped, as Fuel's
//     task-based deployment did (validation warns of it).
//   - A task's copy on a node belongs to one group: the first of its groups
//     (its `groups` list, then group tasks listing it) that includes the
//     node, recorded in Step.Group. A group step on a node depends on its
//     member copies there, and those inherit the group's own dependencies,
//     so ordering groups orders their members, except in a task-based
//     graph (every task version 2.0.0 or later: expand_taskbased.go). A
//     member without a strategy of its own takes its group's, shared by all
//     the group's member steps (Step.StrategyScope): a one_by_one group
//     runs one member at a time.
//   - `type: skipped` tasks, and with opts.Tasks every unlisted task,
//     become skipped steps (Kind "skipped", Skipped set) that keep their
//     edges. With opts.Nodes only steps on those nodes exist (stages stay
//     on the control plane); edges to the others are dropped.
//
// Steps come in task order, each task's copies in node order (control
// plane first). Other references to missing tasks or nodes, unknown task
// types, bad regular expressions and cycles (naming their steps) are
// errors, all reported together. The graph is not modified.
func Expand(g *model.Graph, nodes []model.Node, opts ExpandOptions) ([]*model.Step, error) {
	if g == nil {
		return nil, errors.New("expand: no graph")
	}
	sel, err := newNodeSelector(nodes)
	if err != nil {
		return nil, fmt.Errorf("expand: %w", err)
	}
	x := &graphExpansion{
		opts:     opts,
		cat:      opts.Catalogue,
		sel:      sel,
		byID:     make(map[string]*model.Task, len(g.Tasks)),
		copies:   make(map[string][]taskCopy, len(g.Tasks)),
		stepAt:   make(map[string]*model.Step, 2*len(g.Tasks)),
		named:    map[string][]*model.Task{},
		roleSets: map[string][]bool{},
		anyOfs:   map[string]bool{},
		types:    map[string]taskType{},
		edges:    newStepEdges(2 * len(g.Tasks)),
	}
	if x.cat == nil {
		x.cat = kinds.Builtin()
	}
	x.index(g)
	x.subsets()
	for _, t := range x.tasks {
		x.place(t)
	}
	for _, t := range x.tasks {
		x.link(t)
	}
	x.linkGroups()
	if len(x.errs) > 0 {
		return nil, errors.Join(x.errs...)
	}
	if err := x.edges.cycles(); err != nil {
		return nil, fmt.Errorf("expand: %w", err)
	}
	return x.steps, nil
}

type taskCopy struct {
	step *model.Step
	node int // node index, or controlPlane
}

type graphExpansion struct {
	opts ExpandOptions
	cat  *kinds.Catalogue
	sel  *nodeSelector

	tasks    []*model.Task
	byID     map[string]*model.Task
	groupsOf map[string][]string // task id → groups it belongs to, in order
	members  map[string][]string // group id → member task ids, in order
	// nodeGroups are the groups a task's /regex/ groups entries match:
	// they add their nodes, not their ordering (see relations.go).
	nodeGroups map[string][]string
	tagSel     *nodeSelector // nodes by tags (expand_tags.go)

	onNodes  []bool // nil = every node
	onMaster bool   // the control plane is in the node subset
	only     map[string]bool

	steps  []*model.Step
	copies map[string][]taskCopy
	stepAt map[string]*model.Step // step id → step
	edges  stepEdges

	named    map[string][]*model.Task // "/regex/" → matching tasks
	roleSets map[string][]bool        // role filter → selected nodes; index 0 is the control plane
	groupSet map[string][]bool        // group id → its nodes, as roleSets
	anyOfs   map[string]bool          // AnyOf groups already added
	types    map[string]taskType      // task type → what the catalogue says of it
	errs     []error
}

func (x *graphExpansion) fail(t *model.Task, format string, args ...any) {
	where := fmt.Sprintf("task %q", t.ID)
	if t.Pos.Line > 0 {
		where = t.Pos.String() + ": " + where
	}
	x.errs = append(x.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}

func (x *graphExpansion) index(g *model.Graph) {
	for i, t := range g.Tasks {
		if t == nil || t.ID == "" {
			x.errs = append(x.errs, fmt.Errorf("task %d has no id", i))
			continue
		}
		if _, dup := x.byID[t.ID]; dup {
			x.fail(t, "defined twice")
			continue
		}
		x.byID[t.ID] = t
		x.tasks = append(x.tasks, t)
	}
	x.groupsOf = map[string][]string{}
	x.members = map[string][]string{}
	x.nodeGroups = map[string][]string{}
	join := func(task, group string) {
		if !slices.Contains(x.groupsOf[task], group) {
			x.groupsOf[task] = append(x.groupsOf[task], group)
			x.members[group] = append(x.members[group], task)
		}
	}
	for _, t := range x.tasks {
		for _, gid := range t.Groups {
			if isRegex(gid) {
				groups, err := x.groupsNamed(gid)
				if err != nil {
					x.fail(t, "groups: %v", err)
					continue
				}
				for _, g := range groups {
					if !slices.Contains(x.nodeGroups[t.ID], g.ID) {
						x.nodeGroups[t.ID] = append(x.nodeGroups[t.ID], g.ID)
					}
				}
				continue
			}
			if _, ok := x.byID[gid]; !ok {
				continue // dropped, as Fuel did: see relations.go
			}
			join(t.ID, gid)
		}
	}
	for _, t := range x.tasks {
		if t.Type != model.TaskGroup {
			continue
		}
		for _, m := range t.Tasks {
			if _, ok := x.byID[m]; !ok {
				x.fail(t, "tasks: no task %q", m)
				continue
			}
			join(m, t.ID)
		}
	}
}

func (x *graphExpansion) subsets() {
	if len(x.opts.Nodes) > 0 {
		x.onNodes = make([]bool, len(x.sel.nodes))
		for _, name := range x.opts.Nodes {
			if name == model.ControlPlane {
				x.onMaster = true
				continue
			}
			i, ok := x.sel.byName[name]
			if !ok {
				x.errs = append(x.errs, fmt.Errorf("nodes: unknown node %q", name))
				continue
			}
			x.onNodes[i] = true
		}
	}
	if len(x.opts.Tasks) > 0 {
		x.only = map[string]bool{}
		for _, id := range x.opts.Tasks {
			if _, ok := x.byID[id]; !ok {
				x.errs = append(x.errs, fmt.Errorf("tasks: unknown task %q", id))
				continue
			}
			x.only[id] = true
		}
	}
}

// nodesOf returns the nodes a task runs on, before the node subset.
func (x *graphExpansion) nodesOf(t *model.Task) ([]int, error) {
	if t.Type == model.TaskStage {
		return []int{controlPlane}, nil
	}
	tags, err := taskTags(t)
	if err != nil {
		return nil, err
	}
	if tags != nil && t.Type != model.TaskGroup {
		sel, err := x.tagSelector()
		if err != nil {
			return nil, err
		}
		picked, err := sel.roles(tags)
		if err != nil {
			return nil, fmt.Errorf("tags: %w", err)
		}
		return picked, nil
	}
	groups := append(slices.Clone(x.groupsOf[t.ID]), x.nodeGroups[t.ID]...)
	if len(t.Roles) == 0 && len(groups) == 0 {
		if t.Type == model.TaskGroup {
			return nil, nil
		}
		return []int{controlPlane}, nil
	}
	picked, err := x.sel.roles(t.Roles)
	if err != nil {
		return nil, fmt.Errorf("roles: %w", err)
	}
	for _, gid := range groups {
		set, err := x.groupNodes(gid)
		if err != nil {
			return nil, err
		}
		for i, ok := range set {
			if ok {
				picked = append(picked, i-1)
			}
		}
	}
	slices.Sort(picked)
	return slices.Compact(picked), nil
}

// groupNodes is the node set of a group task's roles, indexed by node
// index + 1 (0 is the control plane).
func (x *graphExpansion) groupNodes(gid string) ([]bool, error) {
	if x.groupSet == nil {
		x.groupSet = map[string][]bool{}
	}
	if set, ok := x.groupSet[gid]; ok {
		return set, nil
	}
	picked, err := x.sel.roles(x.byID[gid].Roles)
	if err != nil {
		return nil, fmt.Errorf("group %q: roles: %w", gid, err)
	}
	set := make([]bool, len(x.sel.nodes)+1)
	for _, i := range picked {
		set[i+1] = true
	}
	x.groupSet[gid] = set
	return set, nil
}

func (x *graphExpansion) inSubset(t *model.Task, node int) bool {
	if x.onNodes == nil {
		return true
	}
	if node == controlPlane {
		return x.onMaster || t.Type == model.TaskStage
	}
	return x.onNodes[node]
}

// place creates the task's steps.
func (x *graphExpansion) place(t *model.Task) {
	nodes, err := x.nodesOf(t)
	if err != nil {
		x.fail(t, "%v", err)
		return
	}
	skipped := t.Type == model.TaskSkipped || (x.only != nil && !x.only[t.ID])
	kind := t.Type
	var spec map[string]any
	var meta model.Meta
	structural := true
	switch {
	case skipped:
		kind = model.TaskSkipped
	case t.Type == model.TaskGroup || t.Type == model.TaskStage:
	default:
		tt := x.taskType(t.Type)
		if !tt.known {
			x.fail(t, "unknown task type %q%s", t.Type, suggest.Mean(x.cat.Suggest(t.Type)))
			return
		}
		base, out, m, err := x.cat.TaskSpec(t.Type, t.Parameters)
		if err != nil {
			x.fail(t, "%v", err)
			return
		}
		kind, spec, meta = strings.ToLower(base), out, m
		structural = tt.structural
		if tt.structural {
			spec = nil
		}
	}
	mergeMeta(&meta, t.Meta)
	life, err := TaskLifecycle(t)
	if err != nil {
		x.fail(t, "%v", err)
		return
	}
	// A task type's spec is built afresh (kinds copies the parameters), so
	// the first copy may keep it; a kind's spec is the task's own map.
	fresh := spec != nil && x.taskType(t.Type).fuel
	perNode := !skipped && x.cat.RunsOnControlPlane(t.Type)
	for _, n := range nodes {
		if !x.inSubset(t, n) {
			continue
		}
		s := &model.Step{
			ID:        t.ID + "@" + x.sel.suffix(n),
			Kind:      kind,
			Name:      t.ID,
			Node:      x.sel.stepNode(n),
			Meta:      meta,
			Condition: t.Condition,
			Strategy:  t.Strategy.Limit(),
			Task:      t.ID,
			Skipped:   skipped,
			Group:     x.groupOn(t, n),
			TestPre:   life.TestPre,
			TestPost:  life.TestPost,
		}
		x.inheritStrategy(t, s, structural)
		if t.FailOnError != nil {
			v := *t.FailOnError
			s.FailOnError = &v
		}
		switch {
		case fresh:
			s.Spec, fresh = spec, false
		case spec != nil:
			s.Spec = mergeClone(spec).(map[string]any)
		}
		if perNode {
			// master_shell and the provisioning hooks run on the control
			// plane, once for each of their nodes, told which one.
			s.Node = ""
			x.cat.ForNode(t.Type, s.Spec, nodeName(x.sel.stepNode(n)))
		}
		x.steps = append(x.steps, s)
		x.edges.vertex(s)
		x.copies[t.ID] = append(x.copies[t.ID], taskCopy{s, n})
		x.stepAt[s.ID] = s
	}
}

// taskType is what the catalogue says of a task type, looked up once per
// type: tasks share a handful of types.
type taskType struct {
	known      bool // the catalogue has it, as a kind or a task type
	structural bool // its kind is structural (no spec)
	fuel       bool // a Fuel task type mapped onto a kind
}

func (x *graphExpansion) taskType(typ string) taskType {
	if tt, ok := x.types[typ]; ok {
		return tt
	}
	var tt taskType
	if k, ok := x.cat.Lookup(typ); ok {
		tt = taskType{known: true, structural: k.Structural, fuel: x.cat.IsTaskType(typ)}
	}
	x.types[typ] = tt
	return tt
}

// groupOn is the first group of the task that includes node n.
func (x *graphExpansion) groupOn(t *model.Task, n int) string {
	for _, gid := range x.groupsOf[t.ID] {
		if set, err := x.groupNodes(gid); err == nil && set[n+1] {
			return gid
		}
	}
	return ""
}

// link adds the task's edges.
func (x *graphExpansion) link(t *model.Task) {
	copies := x.copies[t.ID]
	for _, r := range t.Requires {
		other, ok := x.byID[r]
		if !ok {
			continue // dropped, as Fuel did: see relations.go
		}
		for _, c := range copies {
			if s, ok := x.copyOn(other, c); ok {
				x.edges.add(c.step, s)
				continue
			}
			for _, target := range x.sameNode(t, other, c) {
				x.edges.add(c.step, target)
			}
		}
	}
	for _, f := range t.RequiredFor {
		other, ok := x.byID[f]
		if !ok {
			continue // dropped, as Fuel did: see relations.go
		}
		for _, c := range copies {
			if s, ok := x.copyOn(other, c); ok {
				x.edges.add(s, c.step)
				continue
			}
			for _, dependent := range x.sameNode(t, other, c) {
				x.edges.add(dependent, c.step)
			}
		}
	}
	for i, d := range t.CrossDepends {
		x.crossDep(t, fmt.Sprintf("cross_depends[%d]", i), d, false)
	}
	for i, d := range t.CrossDependedBy {
		x.crossDep(t, fmt.Sprintf("cross_depended_by[%d]", i), d, true)
	}
	x.crossDepYAQL(t, "cross_depends", t.CrossDependsYAQL, false)
	x.crossDepYAQL(t, "cross_depended_by", t.CrossDependedByYAQL, true)
}

// sameNode picks the copies of other that copy c of t links to through
// requires or required_for.
func (x *graphExpansion) sameNode(t, other *model.Task, c taskCopy) []*model.Step {
	if s, ok := x.copyOn(other, c); ok {
		return []*model.Step{s}
	}
	if other.Type == model.TaskStage || other.Type == model.TaskGroup || t.Type == model.TaskStage {
		out := make([]*model.Step, 0, len(x.copies[other.ID]))
		for _, oc := range x.copies[other.ID] {
			if oc.step != c.step {
				out = append(out, oc.step)
			}
		}
		return out
	}
	return nil
}

// copyOn is other's copy on the node of copy c, if it has one.
func (x *graphExpansion) copyOn(other *model.Task, c taskCopy) (*model.Step, bool) {
	s, ok := x.stepAt[other.ID+"@"+x.sel.suffix(c.node)]
	return s, ok
}

// crossDep links copies of t with the copies of the tasks d names on the
// nodes d's role selects.
func (x *graphExpansion) crossDep(t *model.Task, field string, d model.CrossDep, reverse bool) {
	x.crossDepOf(t, field, d, reverse, x.copies[t.ID])
}

// crossDepOf links the given copies of t as crossDep does.
func (x *graphExpansion) crossDepOf(t *model.Task, field string, d model.CrossDep, reverse bool, copies []taskCopy) {
	others, err := x.tasksNamed(d.Name)
	if err != nil {
		x.fail(t, "%s: %v", field, err)
		return
	}
	roles, self, err := crossRoles(d.Role)
	if err != nil {
		x.fail(t, "%s: role: %v", field, err)
		return
	}
	set, err := x.roleSet(roles)
	if err != nil {
		x.fail(t, "%s: role: %v", field, err)
		return
	}
	anyPolicy := false
	switch d.Policy {
	case "", "all":
	case "any":
		anyPolicy = true
	default:
		x.fail(t, "%s: unknown policy %q (want all or any)", field, d.Policy)
		return
	}
	for _, c := range copies {
		var targets []*model.Step
		for _, o := range others {
			for _, oc := range x.copies[o.ID] {
				if oc.step == c.step {
					continue
				}
				if (self && oc.node == c.node) || set[oc.node+1] {
					targets = append(targets, oc.step)
				}
			}
		}
		switch {
		case !reverse && anyPolicy:
			x.addAnyOf(c.step, targets)
		case !reverse:
			for _, target := range targets {
				x.edges.add(c.step, target)
			}
		case anyPolicy:
			// Each dependent needs one copy of t, whichever node it is on.
			group := make([]*model.Step, 0, len(x.copies[t.ID]))
			for _, tc := range x.copies[t.ID] {
				group = append(group, tc.step)
			}
			for _, dependent := range targets {
				x.addAnyOf(dependent, slices.DeleteFunc(slices.Clone(group), func(s *model.Step) bool { return s == dependent }))
			}
		default:
			for _, dependent := range targets {
				x.edges.add(dependent, c.step)
			}
		}
	}
}

func (x *graphExpansion) addAnyOf(s *model.Step, group []*model.Step) {
	if len(group) == 0 {
		return
	}
	ids := make([]string, len(group))
	for i, g := range group {
		ids[i] = g.ID
	}
	key := s.ID + "\x00" + strings.Join(ids, "\x00")
	if x.anyOfs[key] {
		return
	}
	x.anyOfs[key] = true
	s.AnyOf = append(s.AnyOf, ids)
	x.edges.anyOf(s, ids)
}

// tasksNamed resolves a cross dependency's name: a task id, or a /regex/
// matching task ids from the start.
func (x *graphExpansion) tasksNamed(name string) ([]*model.Task, error) {
	if !isRegex(name) {
		t, ok := x.byID[name]
		if !ok {
			return nil, fmt.Errorf("no task %q", name)
		}
		return []*model.Task{t}, nil
	}
	if ts, ok := x.named[name]; ok {
		return ts, nil
	}
	re, err := x.sel.compile(name)
	if err != nil {
		return nil, err
	}
	var out []*model.Task
	for _, t := range x.tasks {
		if re.MatchString(t.ID) {
			out = append(out, t)
		}
	}
	x.named[name] = out
	return out, nil
}

// crossRoles reads a cross dependency's role: absent means every node; a
// string or a list of strings; "self" means the dependent's own node.
func crossRoles(role any) (roles []string, self bool, err error) {
	var list []string
	switch r := role.(type) {
	case nil:
		return []string{"*"}, false, nil
	case string:
		list = []string{r}
	case []string:
		list = r
	case []any:
		for _, item := range r {
			s, ok := item.(string)
			if !ok {
				return nil, false, fmt.Errorf("expected a string, got %T", item)
			}
			list = append(list, s)
		}
	default:
		return nil, false, fmt.Errorf("expected a string or a list of strings, got %T", role)
	}
	for _, s := range list {
		if s == "self" {
			self = true
			continue
		}
		roles = append(roles, s)
	}
	return roles, self, nil
}

// roleSet is the node set of role expressions, indexed by node index + 1
// (0 is the control plane), cached by expression.
func (x *graphExpansion) roleSet(roles []string) ([]bool, error) {
	key := strings.Join(roles, "\x00")
	if set, ok := x.roleSets[key]; ok {
		return set, nil
	}
	picked, err := x.sel.roles(roles)
	if err != nil {
		return nil, err
	}
	set := make([]bool, len(x.sel.nodes)+1)
	for _, i := range picked {
		set[i+1] = true
	}
	x.roleSets[key] = set
	return set, nil
}

// linkGroups makes each group step wait for its members on its node, and
// gives the members the group's own dependencies. A copy is a member of the
// one group recorded in its Step.Group, so a task listed in two groups of
// a node's roles runs once, in the first, without tying the groups into a
// cycle.
func (x *graphExpansion) linkGroups() {
	inherit := !taskBased(x.tasks)
	for _, t := range x.tasks {
		if t.Type != model.TaskGroup && len(x.members[t.ID]) == 0 {
			continue
		}
		for _, gc := range x.copies[t.ID] {
			own := slices.Clone(gc.step.Deps)
			ownAny := slices.Clone(gc.step.AnyOf)
			for _, m := range x.members[t.ID] {
				mc, ok := x.stepAt[m+"@"+x.sel.suffix(gc.node)]
				if !ok || mc.Group != t.ID {
					continue // on this node the task runs as part of another group
				}
				x.edges.add(gc.step, mc)
				if !inherit {
					continue // task-based: see expand_taskbased.go
				}
				for _, d := range own {
					if ds := x.stepAt[d]; ds != mc {
						x.edges.add(mc, ds)
					}
				}
				for _, group := range ownAny {
					steps := make([]*model.Step, 0, len(group))
					for _, id := range group {
						if s := x.stepAt[id]; s != mc {
							steps = append(steps, s)
						}
					}
					x.addAnyOf(mc, steps)
				}
			}
		}
	}
}

// nodeName is a step's node as a task sees it: "master" for the control
// plane.
func nodeName(node string) string {
	if node == "" {
		return model.ControlPlane
	}
	return node
}

// inheritStrategy gives a member step without a strategy of its own its
// group's: every member step of the group then shares one cap (Fuel's
// group strategy bounds how many of the group's nodes deploy at once: a
// one_by_one group runs one member step at a time, amount N at most N).
// Structural steps (groups, stages) change nothing and take no cap.
func (x *graphExpansion) inheritStrategy(t *model.Task, s *model.Step, structural bool) {
	if structural || t.Strategy != nil || s.Group == "" {
		return
	}
	g, ok := x.byID[s.Group]
	if !ok || g.Strategy == nil {
		return
	}
	if limit := g.Strategy.Limit(); limit > 0 || g.Strategy.AmountYAQL != "" {
		s.Strategy, s.StrategyScope = limit, s.Group
	}
}
