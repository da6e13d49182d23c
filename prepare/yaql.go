package prepare

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/yaql"
)

// yaqlEnv evaluates a preparation's Fuel expressions (yaql and legacy
// conditions, yaql strategy amounts and parameter values) per node: each
// expression is parsed once, each node's deployment data built once (and
// kept for later executions when save is set), the data of a task's last
// successful run read once per node and execution, and what expressions
// compute from the data nodes share computed once (yaql.Memo).
type yaqlEnv struct {
	st      GraphStore
	cluster *model.Cluster
	release *model.Release
	execID  string
	save    bool
	hist    *nodeHistory
	exprs   map[string]*yaql.Expr
	// memo is shared by every evaluation of the preparation: what the
	// nodes' expressions compute from the data they share (the cluster's
	// part, the last run's) is computed once, not once per node.
	memo   *yaql.Memo
	shared *yaql.ClusterDeployment // built on first use
	nodes  map[string]*yaql.Deployment
	old    map[string]map[string]any // node + "\x00" + execution; nil = none
	saved  map[string]bool           // nodes whose data is kept
	// commonSaved: this execution's common part is kept; oldCommon the
	// common parts read, by execution (nil: kept whole per node).
	commonSaved bool
	oldCommon   map[string]map[string]any
	// failed is the first store failure met while expanding.
	failed error
}

func newYAQLEnv(ctx context.Context, st GraphStore, c *model.Cluster, execID string, save bool, hist *nodeHistory) (*yaqlEnv, error) {
	env := &yaqlEnv{
		st: st, cluster: c, execID: execID, save: save, hist: hist,
		exprs: map[string]*yaql.Expr{}, memo: yaql.NewMemo(), nodes: map[string]*yaql.Deployment{}, old: map[string]map[string]any{}, saved: map[string]bool{},
		oldCommon: map[string]map[string]any{},
	}
	if c.ReleaseID != "" {
		rel, err := st.GetRelease(ctx, c.ReleaseID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			env.release = rel
		}
	}
	return env, nil
}

// graphUsesYAQL reports whether any task of g carries a Fuel expression.
func graphUsesYAQL(g *model.Graph) bool {
	for _, t := range g.Tasks {
		if isFuelCondition(t.Condition) || graphs.HasYAQL(t) {
			return true
		}
	}
	return false
}

// isFuelCondition tells a yaql or legacy condition from Cairn's own.
func isFuelCondition(cond string) bool {
	if cond == "" {
		return false
	}
	if _, ok := yaql.Untag(cond); ok {
		return true
	}
	return yaql.IsLegacy(cond)
}

// parse parses an expression once per preparation.
func (y *yaqlEnv) parse(src string, legacy bool) (*yaql.Expr, error) {
	key := src
	if legacy {
		key = "legacy\x00" + src
	}
	if x, ok := y.exprs[key]; ok {
		return x, nil
	}
	parse := yaql.Parse
	if legacy {
		parse = yaql.ParseLegacy
	}
	x, err := parse(src)
	if err != nil {
		return nil, err
	}
	y.exprs[key] = x
	return x, nil
}

// deployment builds (and keeps, when saving) a node's deployment data; the
// control plane is a node "master" with the role master.
func (y *yaqlEnv) deployment(ctx context.Context, node string) (*yaql.Deployment, error) {
	d, ok := y.nodes[node]
	if !ok {
		var err error
		if d, err = y.build(node); err != nil {
			return nil, err
		}
		y.nodes[node] = d
	}
	if y.save && !y.saved[node] {
		if !y.commonSaved {
			if err := y.put(ctx, commonPart, d.Common); err != nil {
				return nil, err
			}
			y.commonSaved = true
		}
		if err := y.put(ctx, node, d.Node); err != nil {
			return nil, err
		}
		y.saved[node] = true
	}
	return d, nil
}

// commonPart is the node id under which an execution keeps the part of
// its deployment data every node shares ($common); each node's row keeps
// only its own part ($node). So a cluster's deployment data grows with its
// nodes, not with their square (every node's data lists every node), and
// the node's data as a run saw it is the two joined (yaql.Join). Rows of
// executions from before keep each node's data whole, and have no common
// part. No node is named "" (the control plane is "master").
const commonPart = ""

// put keeps one part of this execution's deployment data.
func (y *yaqlEnv) put(ctx context.Context, node string, part map[string]any) error {
	raw, err := json.Marshal(part)
	if err != nil {
		return fmt.Errorf("deployment data of node %s: %w", cmp.Or(node, "(common)"), err)
	}
	return y.st.PutDeploymentData(ctx, y.cluster.ID, node, y.execID, raw)
}

// build builds a node's deployment data.
func (y *yaqlEnv) build(node string) (*yaql.Deployment, error) {
	n := y.cluster.Node(node)
	if n == nil {
		n = &model.Node{ID: node, Name: node, Roles: []string{model.ControlPlane}}
	}
	if y.shared == nil {
		cd, err := yaql.NewClusterDeployment(y.cluster, y.release)
		if err != nil {
			return nil, err
		}
		y.shared = cd
	}
	return y.shared.Node(n)
}

// input is the input of a task's expressions on a node: its deployment
// data now and as the task's last successful run there saw it.
func (y *yaqlEnv) input(ctx context.Context, node, task string) (yaql.Input, error) {
	d, err := y.deployment(ctx, node)
	if err != nil {
		return yaql.Input{}, err
	}
	var old map[string]any
	if !y.hist.force {
		run, err := y.hist.last(ctx, node, task)
		if err != nil {
			return yaql.Input{}, err
		}
		if run != nil {
			if old, err = y.oldData(ctx, node, run.ExecutionID); err != nil {
				return yaql.Input{}, err
			}
		}
	}
	in := d.Input(old)
	in.Memo = y.memo
	return in, nil
}

// oldData reads the deployment data execution execID kept for a node —
// its own part joined to the execution's common part, or, from an
// execution that kept it whole, as it is; none kept (an execution from
// before Cairn kept it) reads as no run.
func (y *yaqlEnv) oldData(ctx context.Context, node, execID string) (map[string]any, error) {
	key := node + "\x00" + execID
	if old, ok := y.old[key]; ok {
		return old, nil
	}
	own, err := y.readPart(ctx, node, execID)
	if err != nil || own == nil {
		y.old[key] = nil
		return nil, err
	}
	common, ok := y.oldCommon[execID]
	if !ok {
		if common, err = y.readPart(ctx, commonPart, execID); err != nil {
			return nil, err
		}
		y.oldCommon[execID] = common
	}
	if common != nil {
		own = yaql.Join(common, own)
	}
	y.old[key] = own
	return own, nil
}

// readPart reads one kept part of an execution's deployment data (nil:
// none kept).
func (y *yaqlEnv) readPart(ctx context.Context, node, execID string) (map[string]any, error) {
	raw, err := y.st.GetDeploymentData(ctx, y.cluster.ID, node, execID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	what := "node " + node
	if node == commonPart {
		what = "the cluster"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("deployment data of %s (execution %s): %w", what, execID, err)
	}
	n, err := yaql.Normalize(v)
	if err != nil {
		return nil, fmt.Errorf("deployment data of %s (execution %s): %w", what, execID, err)
	}
	m, _ := n.(map[string]any)
	return m, nil
}

// resolveStep evaluates a step's Fuel expressions on its node: a yaql or
// legacy condition becomes "" (true) or "false", a yaql strategy amount
// the step's cap, and {yaql_exp: …} values of its spec their values.
// Structural steps only lose a Fuel condition (nothing of theirs runs).
// The strategy amount is strategyOf's: the step's task, or its group when
// the step shares the group's cap.
func (y *yaqlEnv) resolveStep(ctx context.Context, s *model.Step, strategyOf *model.Task, node string, structural bool) error {
	fuelCond := isFuelCondition(s.Condition)
	amount := ""
	if strategyOf != nil && strategyOf.Strategy != nil {
		amount = strategyOf.Strategy.AmountYAQL
	}
	hasValues := yaql.HasValue(s.Spec)
	if !fuelCond && amount == "" && !hasValues {
		return nil
	}
	if structural {
		if fuelCond {
			s.Condition = ""
		}
		return nil
	}
	in, err := y.input(ctx, node, s.Task)
	if err != nil {
		return err
	}
	if fuelCond {
		src, isYAQL := yaql.Untag(s.Condition)
		if !isYAQL {
			src = s.Condition
		}
		x, err := y.parse(src, !isYAQL)
		if err != nil {
			return fmt.Errorf("condition: %w", err)
		}
		ok, err := x.Bool(in)
		if err != nil {
			return fmt.Errorf("condition: %w", err)
		}
		s.Condition = ""
		if !ok {
			s.Condition = "false"
		}
	}
	if amount != "" {
		x, err := y.parse(amount, false)
		if err != nil {
			return fmt.Errorf("strategy amount: %w", err)
		}
		v, err := x.Eval(in)
		if err != nil {
			return fmt.Errorf("strategy amount: %w", err)
		}
		n, ok := v.(int64)
		if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) {
			n, ok = int64(f), true
		}
		if !ok || n <= 0 || n > math.MaxInt32 {
			return fmt.Errorf("%w, got %v", errBadAmount, v)
		}
		s.Strategy = int(n)
	}
	if hasValues {
		spec, err := y.resolveValues(s.Spec, "spec", in)
		if err != nil {
			return err
		}
		s.Spec = spec.(map[string]any)
	}
	return nil
}

// resolveValues returns v with every {yaql_exp: "…"} value evaluated,
// an error naming the value's path below root.
func (y *yaqlEnv) resolveValues(v any, root string, in yaql.Input) (any, error) {
	return nested.Map(v, root, func(p nested.Path, v any) (any, error) {
		src, ok := yaql.Value(v)
		if !ok {
			return v, nil
		}
		x, err := y.parse(src, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.String(), err)
		}
		out, err := x.Eval(in)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.String(), err)
		}
		// The value may share the deployment data other steps read.
		return yaql.Clone(out), nested.SkipChildren
	})
}

// isYAQLError tells a problem of an expression (a configuration error no
// retry fixes) from a store failure.
func isYAQLError(err error) bool {
	var ye *yaql.Error
	return errors.As(err, &ye) || errors.Is(err, errBadAmount)
}

var errBadAmount = errors.New("strategy amount: expected a positive whole number")
