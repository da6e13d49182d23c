package prepare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"

	"github.com/cairn-io/cairn/expr"
)

// historyFuncs are the condition functions that read a node's history
// (expr.RuntimeFuncNames): `changed` and `changed "task"` (the task's
// parameters differ from its last successful run on the node, or it never
// ran there) and `lastRun` and `lastRun "task"` (that run's time, RFC 3339,
// or "").
var historyFuncs = []string{"changed", "lastRun"}

// usesHistory is a cheap test for conditions that may call historyFuncs.
func usesHistory(cond string) bool {
	for _, fn := range historyFuncs {
		if strings.Contains(cond, fn) {
			return true
		}
	}
	return false
}

// historyValue answers one call of a history function: fn is "changed" or
// "lastRun", task the task asked about ("" for the step's own task). It
// returns a bool for changed and a string for lastRun.
type historyValue func(fn, task string) (any, error)

// specializeCondition replaces every call of a history function in a
// condition by its value, read from the node's history as it stood when the
// execution was prepared. The rest of the condition is left to be evaluated
// when the step runs (it may read dependencies' outputs), so history never
// has to travel to the node and every node sees the history from before
// this execution, whatever order the steps run in.
func specializeCondition(cond string, value historyValue) (string, error) {
	text := strings.TrimSpace(cond)
	if !expr.IsTemplate(text) {
		text = "{{ " + text + " }}"
	}
	tr := parse.New("condition")
	tr.Mode = parse.SkipFuncCheck
	if _, err := tr.Parse(text, "{{", "}}", map[string]*parse.Tree{}); err != nil {
		return "", fmt.Errorf("condition: %w", err)
	}
	s := specializer{value: value}
	s.list(tr.Root)
	if s.err != nil {
		return "", fmt.Errorf("condition: %w", s.err)
	}
	return tr.Root.String(), nil
}

type specializer struct {
	value historyValue
	err   error
}

func (s *specializer) list(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		s.node(n)
	}
}

func (s *specializer) node(n parse.Node) {
	switch x := n.(type) {
	case *parse.ActionNode:
		s.pipe(x.Pipe)
	case *parse.IfNode:
		s.branch(&x.BranchNode)
	case *parse.RangeNode:
		s.branch(&x.BranchNode)
	case *parse.WithNode:
		s.branch(&x.BranchNode)
	case *parse.ListNode:
		s.list(x)
	case *parse.TemplateNode:
		s.pipe(x.Pipe)
	}
}

func (s *specializer) branch(b *parse.BranchNode) {
	s.pipe(b.Pipe)
	s.list(b.List)
	s.list(b.ElseList)
}

func (s *specializer) pipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	for i, cmd := range p.Cmds {
		if len(cmd.Args) > 0 {
			if fn, ok := historyCall(cmd.Args[0]); ok {
				if i > 0 {
					s.fail("%s cannot take a piped value; write %s \"task\"", fn, fn)
					return
				}
				cmd.Args = []parse.Node{s.call(fn, cmd.Args[1:], cmd.Args[0].Position())}
				continue
			}
		}
		for j := 1; j < len(cmd.Args); j++ {
			cmd.Args[j] = s.arg(cmd.Args[j])
		}
	}
}

// arg specializes an argument: a bare history function name is a call
// without arguments; parenthesized pipelines are walked.
func (s *specializer) arg(n parse.Node) parse.Node {
	switch x := n.(type) {
	case *parse.IdentifierNode:
		if fn, ok := historyCall(x); ok {
			return s.call(fn, nil, x.Position())
		}
	case *parse.PipeNode:
		s.pipe(x)
	case *parse.ChainNode:
		x.Node = s.arg(x.Node)
	}
	return n
}

func historyCall(n parse.Node) (string, bool) {
	id, ok := n.(*parse.IdentifierNode)
	if !ok || !slices.Contains(historyFuncs, id.Ident) {
		return "", false
	}
	return id.Ident, true
}

// call evaluates one history function call into a constant node.
func (s *specializer) call(fn string, args []parse.Node, pos parse.Pos) parse.Node {
	task := ""
	switch len(args) {
	case 0:
	case 1:
		str, ok := args[0].(*parse.StringNode)
		if !ok {
			s.fail("%s takes a task id in quotes, got %s", fn, args[0])
			return &parse.BoolNode{NodeType: parse.NodeBool, Pos: pos}
		}
		task = str.Text
	default:
		s.fail("%s takes at most one task id, got %d arguments", fn, len(args))
		return &parse.BoolNode{NodeType: parse.NodeBool, Pos: pos}
	}
	v, err := s.value(fn, task)
	if err != nil {
		s.fail("%s: %v", fn, err)
		return &parse.BoolNode{NodeType: parse.NodeBool, Pos: pos}
	}
	switch x := v.(type) {
	case bool:
		return &parse.BoolNode{NodeType: parse.NodeBool, Pos: pos, True: x}
	default:
		text := fmt.Sprint(x)
		return &parse.StringNode{NodeType: parse.NodeString, Pos: pos, Quoted: strconv.Quote(text), Text: text}
	}
}

func (s *specializer) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
	}
}
