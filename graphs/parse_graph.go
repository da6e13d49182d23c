package graphs

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

var errOutOfRange = errors.New("out of range")

// graphEntry is one graph type's tasks, from all documents.
type graphEntry struct {
	g     *model.Graph
	pos   model.Position
	tasks []*taskEntry
}

// taskEntry is a decoded task with the document node it came from.
type taskEntry struct {
	t         *model.Task
	d         *document  // nil for tasks built in code (ValidateGraph)
	node      *yaml.Node // the task's mapping
	path      string     // the task's path in its document: "tasks[3]" or "[3]"
	typeKnown bool
}

// pos is the position of the value at a path relative to the task.
func (e *taskEntry) pos(rel string, preferKey bool) model.Position {
	if e.d == nil {
		return e.t.Pos
	}
	return e.d.pos(locate(e.node, rel, preferKey))
}

// graph returns the graph of a type, creating it on first use.
func (p *parser) graph(typ, name string, pos model.Position) *graphEntry {
	for _, g := range p.graphs {
		if g.g.Type == typ {
			if g.g.Name == "" {
				g.g.Name = name
			}
			return g
		}
	}
	g := &graphEntry{g: &model.Graph{Type: typ, Name: name}, pos: pos}
	p.graphs = append(p.graphs, g)
	return g
}

var graphFields = []string{"apiVersion", "kind", "metadata", "tasks"}

// graphDocument decodes a `kind: Graph` document.
func (p *parser) graphDocument(d *document) {
	root := d.root
	name, typ := "", model.DefaultGraphType
	var tasks *yaml.Node
	fields(root, func(key string, k, v *yaml.Node) {
		switch key {
		case "apiVersion":
			p.apiVersion(d, v)
		case "kind":
		case "metadata":
			if isNull(v) {
				return
			}
			if v.Kind != yaml.MappingNode {
				p.c.add(d.pos(v), "metadata", "expected an object {name, type}, got %s", describe(v))
				return
			}
			fields(v, func(key string, k, v *yaml.Node) {
				switch key {
				case "name":
					name, _ = p.text(d, v, "metadata.name")
				case "type":
					typ = p.graphType(d, v, "metadata.type")
				default:
					p.unknownField(d, k, "metadata", key, []string{"name", "type"})
				}
			})
		case "tasks":
			tasks = v
		default:
			p.unknownField(d, k, "", key, graphFields)
		}
	})
	g := p.graph(typ, name, d.pos(root))
	if tasks != nil && !isNull(tasks) {
		p.taskList(d, g, tasks, "tasks")
	}
}

// fuelGraph decodes Fuel's graph object {type, name, tasks}.
func (p *parser) fuelGraph(d *document) {
	root := d.root
	name, typ := "", model.DefaultGraphType
	var tasks *yaml.Node
	fields(root, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			name, _ = p.text(d, v, "name")
		case "type":
			typ = p.graphType(d, v, "type")
		case "tasks":
			tasks = v
		default:
			p.unknownField(d, k, "", key, []string{"type", "name", "tasks"})
		}
	})
	g := p.graph(typ, name, d.pos(root))
	if tasks != nil && !isNull(tasks) {
		p.taskList(d, g, tasks, "tasks")
	}
}

func (p *parser) graphType(d *document, n *yaml.Node, path string) string {
	if isNull(n) {
		return model.DefaultGraphType
	}
	s, ok := p.text(d, n, path)
	if !ok {
		return model.DefaultGraphType
	}
	if s == "" || strings.ContainsAny(s, "/ \t\n") {
		p.c.add(d.pos(n), path, "invalid graph type %q: want a non-empty name without '/' or spaces", s)
		return model.DefaultGraphType
	}
	return s
}

// taskList decodes a list of tasks into g.
func (p *parser) taskList(d *document, g *graphEntry, n *yaml.Node, path string) {
	if n.Kind != yaml.SequenceNode {
		p.c.add(d.pos(n), path, "expected a list of tasks, got %s", describe(n))
		return
	}
	for i, item := range n.Content {
		tp := path + "[" + strconv.Itoa(i) + "]"
		if item.Kind != yaml.MappingNode {
			p.c.add(d.pos(item), tp, "expected a task (an object), got %s", describe(item))
			continue
		}
		e := p.task(d, item, tp)
		g.tasks = append(g.tasks, e)
		g.g.Tasks = append(g.g.Tasks, e.t)
	}
}

// taskFields are the task fields Cairn interprets, by their canonical
// (Fuel) names; others are kept in Task.Extra.
var taskFields = [...]string{
	"id", "type", "version", "roles", "groups", "tasks", "requires", "required_for",
	"cross_depends", "cross_depended_by", "condition", "fail_on_error", "strategy",
	"fault_tolerance", "parameters", "meta",
}

// taskFieldNames maps every accepted spelling to its index in taskFields.
var taskFieldNames = func() map[string]int {
	m := make(map[string]int, len(taskFields)+3)
	for i, f := range taskFields {
		m[f] = i
	}
	m["role"] = m["roles"]
	m["cross-depends"] = m["cross_depends"]
	m["cross-depended-by"] = m["cross_depended_by"]
	return m
}()

// task decodes one Fuel task.
func (p *parser) task(d *document, n *yaml.Node, path string) *taskEntry {
	t := &model.Task{Pos: d.pos(n)}
	e := &taskEntry{t: t, d: d, node: n, path: path}
	var seen [len(taskFields)]string // spelling used, by field
	var idNode, typeNode, paramStrategy *yaml.Node
	fields(n, func(key string, k, v *yaml.Node) {
		fp := path + "." + key
		f, known := taskFieldNames[key]
		canon := key
		if known {
			canon = taskFields[f]
			if first := seen[f]; first != "" {
				p.c.add(d.pos(k), fp, "%s and %s are the same field; give one", first, key)
				return
			}
			seen[f] = key
		}
		if isNull(v) {
			t.Nulls = append(t.Nulls, canon)
			if canon == "id" {
				idNode = v
			}
			return
		}
		switch canon {
		case "id":
			idNode = v
			t.ID, _ = p.text(d, v, fp)
		case "type":
			typeNode = v
			t.Type, _ = p.str(d, v, fp)
		case "version":
			t.Version, _ = p.text(d, v, fp)
		case "roles":
			t.Roles, _ = p.strList(d, v, fp, true)
			p.checkPatterns(d, v, fp, t.Roles)
		case "groups":
			t.Groups, _ = p.strList(d, v, fp, true)
			p.checkPatterns(d, v, fp, t.Groups)
		case "tasks":
			t.Tasks, _ = p.strList(d, v, fp, true)
		case "requires":
			t.Requires, _ = p.strList(d, v, fp, true)
		case "required_for":
			t.RequiredFor, _ = p.strList(d, v, fp, true)
		case "cross_depends":
			t.CrossDepends, t.CrossDependsYAQL = p.crossDeps(d, v, fp)
		case "cross_depended_by":
			t.CrossDependedBy, t.CrossDependedByYAQL = p.crossDeps(d, v, fp)
		case "condition":
			t.Condition = p.condition(d, v, fp)
		case "fail_on_error":
			if b, ok := p.boolean(d, v, fp); ok {
				t.FailOnError = &b
			}
		case "strategy":
			t.Strategy = p.strategy(d, v, fp)
		case "fault_tolerance":
			t.FaultTolerance = p.faultTolerance(d, v, fp)
		case "parameters":
			t.Parameters, _ = p.object(d, v, fp)
			p.placeholders(d, v, fp)
			paramStrategy = mapGet(v, "strategy")
		case "meta":
			t.Meta = p.meta(d, v, fp)
		default:
			if isLifecycleField(key) {
				p.lifecycleField(d, key, v, fp)
			}
			if t.Extra == nil {
				t.Extra = map[string]any{}
			}
			t.Extra[key] = p.value(d, v, fp)
		}
	})
	if t.Strategy == nil && paramStrategy != nil && paramStrategy.Kind == yaml.MappingNode {
		// Fuel's older graphs give the strategy among the parameters.
		t.Strategy = p.strategy(d, paramStrategy, path+".parameters.strategy")
	}
	switch {
	case idNode == nil:
		p.c.add(d.pos(n), path+".id", "missing task id")
	case t.ID == "" && !isNull(idNode) && idNode.Kind == yaml.ScalarNode:
		p.c.add(d.pos(idNode), path+".id", "missing task id")
	case isNull(idNode):
		p.c.add(d.pos(idNode), path+".id", "a task id cannot be null")
	case strings.Contains(t.ID, "@"):
		p.c.add(d.pos(idNode), path+".id", "task id %q may not contain '@' (it separates tasks from nodes)", t.ID)
	}
	switch {
	case typeNode == nil:
		if !p.opts.Partial {
			p.c.add(d.pos(n), path+".type", "missing task type")
		}
	case t.Type == "":
		if typeNode.Kind == yaml.ScalarNode && typeNode.ShortTag() == strTag {
			p.c.add(d.pos(typeNode), path+".type", "missing task type")
		}
	default:
		if p.knownType(t.Type) {
			e.typeKnown = true
		} else {
			p.c.add(d.pos(typeNode), path+".type", "unknown task type %q%s", t.Type, suggest.Mean(p.cat.Suggest(t.Type)))
		}
	}
	return e
}

// knownType reports whether the catalogue knows a task type, asking it
// once per type.
func (p *parser) knownType(typ string) bool {
	known, seen := p.types[typ]
	if !seen {
		_, known = p.cat.Lookup(typ)
		if p.types == nil {
			p.types = map[string]bool{}
		}
		p.types[typ] = known
	}
	return known
}

// checkPatterns compiles the "/regex/" entries of a role or name list.
func (p *parser) checkPatterns(d *document, n *yaml.Node, path string, values []string) {
	for i, v := range values {
		if err := p.checkPattern(v); err != nil {
			at := n
			ip := path
			if n.Kind == yaml.SequenceNode && i < len(n.Content) {
				at, ip = n.Content[i], nested.Index(path, i)
			}
			p.c.add(d.pos(at), ip, "%v", err)
		}
	}
}

// checkPattern validates a Fuel name pattern: "/regex/" must compile.
// Graphs repeat the same few patterns, so each is compiled once.
func (p *parser) checkPattern(s string) error {
	if len(s) < 2 || s[0] != '/' || s[len(s)-1] != '/' {
		return nil
	}
	if err, seen := p.patterns[s]; seen {
		return err
	}
	var err error
	if _, cerr := regexp.Compile(s[1 : len(s)-1]); cerr != nil {
		err = errors.New("invalid pattern " + strconv.Quote(s) + ": " + strings.TrimPrefix(cerr.Error(), "error parsing regexp: "))
	}
	if p.patterns == nil {
		p.patterns = map[string]error{}
	}
	p.patterns[s] = err
	return err
}

// crossDeps reads cross_depends / cross_depended_by: [{name, role,
// policy}], or one such object alone, as Fuel's loader accepted it, or
// {yaql_exp: "…"} giving such a list per node (returned as its source).
func (p *parser) crossDeps(d *document, n *yaml.Node, path string) ([]model.CrossDep, string) {
	items := n.Content
	single := n.Kind == yaml.MappingNode
	switch {
	case single && mapGet(n, "yaql_exp") != nil:
		src, _ := p.yaqlExp(d, n, path)
		return nil, src
	case single:
		items = []*yaml.Node{n}
	case n.Kind != yaml.SequenceNode:
		p.c.add(d.pos(n), path, "expected a list of {name, role, policy}, got %s", describe(n))
		return nil, ""
	}
	var out []model.CrossDep
	for i, item := range items {
		ip := nested.Index(path, i)
		if single {
			ip = path
		}
		if item.Kind != yaml.MappingNode {
			p.c.add(d.pos(item), ip, "expected {name, role, policy}, got %s", describe(item))
			continue
		}
		var cd model.CrossDep
		hasName := false
		fields(item, func(key string, k, v *yaml.Node) {
			fp := nested.Key(ip, key)
			switch key {
			case "name":
				hasName = true
				if s, ok := p.text(d, v, fp); ok {
					cd.Name = s
					if err := p.checkPattern(s); err != nil {
						p.c.add(d.pos(v), fp, "%v", err)
					}
				}
			case "role":
				if isNull(v) {
					return
				}
				if v.Kind == yaml.SequenceNode {
					roles, _ := p.strList(d, v, fp, false)
					p.checkPatterns(d, v, fp, roles)
					cd.Role = roles
				} else if s, ok := p.str(d, v, fp); ok {
					p.checkPatterns(d, v, fp, []string{s})
					cd.Role = s
				}
			case "policy":
				if s, ok := p.str(d, v, fp); ok {
					if s != "all" && s != "any" {
						p.c.add(d.pos(v), fp, "policy must be \"all\" or \"any\", got %q", s)
					}
					cd.Policy = s
				}
			default:
				p.unknownField(d, k, ip, key, []string{"name", "role", "policy"})
			}
		})
		if !hasName || cd.Name == "" {
			p.c.add(d.pos(item), nested.Key(ip, "name"), "missing name")
			continue
		}
		out = append(out, cd)
	}
	return out, ""
}

// strategy reads {type: parallel|one_by_one, amount}.
func (p *parser) strategy(d *document, n *yaml.Node, path string) *model.Strategy {
	if n.Kind != yaml.MappingNode {
		p.c.add(d.pos(n), path, "expected {type, amount}, got %s", describe(n))
		return nil
	}
	s := &model.Strategy{}
	var amountNode *yaml.Node
	fields(n, func(key string, k, v *yaml.Node) {
		fp := nested.Key(path, key)
		switch key {
		case "type":
			if t, ok := p.str(d, v, fp); ok {
				if t != "parallel" && t != "one_by_one" {
					p.c.add(d.pos(v), fp, "strategy type must be \"parallel\" or \"one_by_one\", got %q%s", t, suggest.Hint(t, []string{"parallel", "one_by_one"}))
				}
				s.Type = t
			}
		case "amount":
			amountNode = v
			if v.Kind == yaml.MappingNode {
				s.AmountYAQL, _ = p.yaqlExp(d, v, fp)
				return
			}
			if a, ok := p.integer(d, v, fp); ok {
				if a <= 0 {
					p.c.add(d.pos(v), fp, "amount must be a positive number, got %d", a)
				}
				s.Amount = a
			}
		default:
			p.unknownField(d, k, path, key, []string{"type", "amount"})
		}
	})
	if s.Type == "" {
		s.Type = "parallel"
	}
	if amountNode != nil && s.Type == "one_by_one" {
		p.c.add(d.pos(amountNode), nested.Key(path, "amount"), "amount applies to the parallel strategy only (one_by_one runs one at a time)")
	}
	return s
}

var faultToleranceRE = regexp.MustCompile(`^-?[0-9]+%?$`)

// faultTolerance reads a group's fault tolerance: a count ("2"), -1 for
// no limit, or a percentage ("30%").
func (p *parser) faultTolerance(d *document, n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode {
		p.c.add(d.pos(n), path, "expected a number or a percentage such as \"30%%\", got %s", describe(n))
		return ""
	}
	s := strings.TrimSpace(n.Value)
	if !faultToleranceRE.MatchString(s) || len(s) > 12 {
		p.c.add(d.pos(n), path, "fault_tolerance must be a whole number or a percentage such as \"30%%\", got %q", n.Value)
		return ""
	}
	if strings.HasSuffix(s, "%") {
		if v, _ := strconv.Atoi(strings.TrimSuffix(s, "%")); v < 0 || v > 100 {
			p.c.add(d.pos(n), path, "fault_tolerance percentage must be between 0%% and 100%%, got %q", n.Value)
		}
	}
	return s
}
