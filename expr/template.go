package expr

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"text/template/parse"
	"time"

	texttemplate "text/template"

	"github.com/cairn-io/cairn/internal/nested"
)

// Default limits of one evaluation. text/template has no step limit and no
// cancellation, so every range iteration calls a step counter that also
// checks the deadline, and every string a function builds is capped.
const (
	DefaultMaxOutput = 1 << 20 // bytes per rendered string
	DefaultMaxSteps  = 1_000_000
	DefaultTimeout   = 2 * time.Second
	maxSplitItems    = 100_000
	maxFormatWidth   = 4096
)

// Names of the functions the engine inserts itself; they are valid
// identifiers, so a template may call them, which is harmless.
const (
	stepFunc    = "cairnStep"
	captureFunc = "cairnCapture"
)

// Limits bound one evaluation (a Resolve, Render or Condition call). Zero
// fields take the defaults.
type Limits struct {
	MaxOutput int           // bytes per rendered string
	MaxSteps  int           // range iterations across the whole evaluation
	Timeout   time.Duration // wall-clock budget of the whole evaluation
}

func (l Limits) withDefaults() Limits {
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// ErrLimit is wrapped by errors raised when a template exceeds its limits.
var ErrLimit = errors.New("expression limit exceeded")

// RuntimeFuncNames are functions only an execution provides through
// Context.Funcs (a condition asking whether a task changed since its last
// run). Offline checks accept them; evaluating them without the execution's
// definitions is an error.
func RuntimeFuncNames() []string { return []string{"changed", "lastRun"} }

// evaluator holds the state of one evaluation: the function map bound to
// the context, counters for the limits, and what was found missing.
type evaluator struct {
	ctx      Context
	limits   Limits
	data     map[string]any
	funcs    texttemplate.FuncMap
	deadline time.Time
	steps    int

	missingEnv     stringSet
	missingSecrets stringSet
	secretValues   stringSet
	// optionalEnv lists env keys read under `default` in the template
	// being rendered: an unset one is not reported missing.
	optionalEnv stringSet
	captured    any
	stepNode    parse.Node
	// names are the function names templates may call, for the parser;
	// base carries the bound functions, and each tree is executed as its
	// association named "expr".
	names map[string]any
	base  *texttemplate.Template
}

func newEvaluator(c Context) *evaluator {
	e := &evaluator{
		ctx:            c,
		limits:         c.Limits.withDefaults(),
		missingEnv:     stringSet{},
		missingSecrets: stringSet{},
		secretValues:   stringSet{},
	}
	e.deadline = time.Now().Add(e.limits.Timeout)
	return e
}

// prepareTemplates binds the functions and data on first use, so
// resolving a spec without expressions costs nothing of it.
func (e *evaluator) prepareTemplates() {
	if e.base != nil {
		return
	}
	e.data = rootData(e.ctx)
	e.funcs = e.funcMap()
	e.names = funcNames(e.funcs)
	e.base = texttemplate.New("base").Option("missingkey=error").Funcs(e.funcs)
}

// builtinNames are text/template's own functions, less "call": data is
// JSON and has no functions to call.
func builtinNames() []string {
	return []string{
		"and", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println",
		"urlquery", "eq", "ge", "gt", "le", "lt", "ne",
	}
}

// funcNames is the set of names the parser accepts as functions.
func funcNames(fm texttemplate.FuncMap) map[string]any {
	builtins := builtinNames()
	names := make(map[string]any, len(fm)+len(builtins))
	for _, n := range builtins {
		names[n] = true
	}
	for n := range fm {
		names[n] = true
	}
	return names
}

// staticNames are the names Check accepts: base and runtime functions.
// Built once: the parser only reads the map, and Check runs for every
// string of every document.
var staticNames = sync.OnceValue(func() map[string]any { return funcNames(baseFuncs()) })

// rootData is the template's dot: deps, node and vars, plus each variable at
// the top level (a file template writes {{ .port }}) unless it would hide
// one of the three.
func rootData(c Context) map[string]any {
	root := make(map[string]any, len(c.Vars)+3)
	for k, v := range c.Vars {
		root[k] = v
	}
	deps := c.Deps
	if deps == nil {
		deps = map[string]map[string]any{}
	}
	root["deps"] = deps
	node := c.Node
	if node == nil {
		node = map[string]any{}
	}
	root["node"] = node
	vars := c.Vars
	if vars == nil {
		vars = map[string]any{}
	}
	root["vars"] = vars
	return root
}

// baseFuncs are the functions with their real behaviour where it does not
// depend on a context, used for parsing. Context-bound ones are replaced in
// funcMap.
func baseFuncs() texttemplate.FuncMap {
	fm := texttemplate.FuncMap{
		"env":       func(string) (string, error) { return "", nil },
		"secret":    func(string) string { return "" },
		"dep":       func(string) (map[string]any, error) { return nil, nil },
		"deps":      func() map[string]map[string]any { return nil },
		"vars":      func() map[string]any { return nil },
		"default":   defaultFunc,
		"index":     strictIndex,
		"has":       hasFunc,
		"contains":  func(substr, s string) bool { return strings.Contains(s, substr) },
		"lower":     strings.ToLower,
		"upper":     strings.ToUpper,
		"trim":      strings.TrimSpace,
		"join":      joinFunc,
		"split":     splitFunc,
		"toJSON":    toJSONFunc,
		"sha256":    sha256Func,
		stepFunc:    func() (string, error) { return "", nil },
		captureFunc: func(any) string { return "" },
	}
	for _, name := range RuntimeFuncNames() {
		name := name
		fm[name] = func(...any) (any, error) {
			return nil, fmt.Errorf("function %q is only available during an execution", name)
		}
	}
	return fm
}

// funcMap binds the functions to this evaluation and caps every builtin
// that builds strings.
func (e *evaluator) funcMap() texttemplate.FuncMap {
	fm := baseFuncs()
	max := e.limits.MaxOutput
	capped := func(s string) (string, error) {
		if len(s) > max {
			return "", limitf("a string of %d bytes exceeds %d bytes", len(s), max)
		}
		return s, nil
	}
	fm["env"] = e.env
	fm["secret"] = e.secret
	fm["dep"] = e.dep
	// deps and vars are the dot's, for Deployster's spelling without
	// the dot: {{ deps.disk.state.zone }}, {{ vars.region }}.
	deps, vars := e.data["deps"].(map[string]map[string]any), e.data["vars"].(map[string]any)
	fm["deps"] = func() map[string]map[string]any { return deps }
	fm["vars"] = func() map[string]any { return vars }
	fm[stepFunc] = e.step
	fm[captureFunc] = func(v any) string { e.captured = v; return "" }
	fm["index"] = strictIndex
	fm["join"] = func(sep string, list any) (string, error) {
		s, err := joinFunc(sep, list)
		if err != nil {
			return "", err
		}
		return capped(s)
	}
	fm["toJSON"] = func(v any) (string, error) {
		s, err := toJSONFunc(v)
		if err != nil {
			return "", err
		}
		return capped(s)
	}
	fm["print"] = func(args ...any) (string, error) { return capped(fmt.Sprint(args...)) }
	fm["println"] = func(args ...any) (string, error) { return capped(fmt.Sprintln(args...)) }
	fm["printf"] = func(format string, args ...any) (string, error) {
		if err := checkFormat(format); err != nil {
			return "", err
		}
		return capped(fmt.Sprintf(format, args...))
	}
	fm["html"] = func(args ...any) (string, error) { return capped(texttemplate.HTMLEscaper(args...)) }
	fm["js"] = func(args ...any) (string, error) { return capped(texttemplate.JSEscaper(args...)) }
	fm["urlquery"] = func(args ...any) (string, error) {
		return capped(texttemplate.URLQueryEscaper(args...))
	}
	for name, fn := range e.ctx.Funcs {
		fm[name] = fn
	}
	return fm
}

// env reads a variable for {{ env "KEY" }}, refusing Cairn's own (the
// name may be computed, so the static check cannot see every one).
func (e *evaluator) env(key string) (string, error) {
	if err := CheckEnvKey(key); err != nil {
		return "", err
	}
	lookup := e.ctx.Env
	if lookup == nil {
		lookup = osLookupEnv
	}
	if v, ok := lookup(key); ok {
		return v, nil
	}
	if _, optional := e.optionalEnv[key]; !optional {
		e.missingEnv.add(key)
	}
	return "", nil
}

func (e *evaluator) secret(key string) string {
	if e.ctx.Secret != nil {
		if v, ok := e.ctx.Secret(key); ok {
			if v != "" {
				e.secretValues.add(v)
			}
			return v
		}
	}
	e.missingSecrets.add(key)
	return ""
}

// dep returns the outputs of a dependency named "Kind/name" or by its bare
// name or task id. The kind compares case-insensitively.
func (e *evaluator) dep(name string) (map[string]any, error) {
	if out, ok := e.ctx.Deps[name]; ok {
		return nonNil(out), nil
	}
	if kind, n, ok := strings.Cut(name, "/"); ok {
		for key, out := range e.ctx.Deps {
			k2, n2, ok2 := strings.Cut(key, "/")
			if ok2 && n2 == n && strings.EqualFold(k2, kind) {
				return nonNil(out), nil
			}
		}
	}
	if len(e.ctx.Deps) == 0 {
		return nil, fmt.Errorf("no dependency %q: this step has no dependencies", name)
	}
	return nil, fmt.Errorf("no dependency %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(e.ctx.Deps)), ", "))
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (e *evaluator) step() (string, error) {
	e.steps++
	if e.steps > e.limits.MaxSteps {
		return "", limitf("more than %d loop iterations", e.limits.MaxSteps)
	}
	if e.steps%64 == 0 && time.Now().After(e.deadline) {
		return "", limitf("evaluation took longer than %s", e.limits.Timeout)
	}
	return "", nil
}

// parseTemplate parses src with the evaluation's functions, refuses
// template definitions and calls (they allow unbounded recursion), and
// makes every range body count a step.
func (e *evaluator) parseTemplate(src string) (*parse.Tree, error) {
	e.prepareTemplates()
	tree, err := parseTree(src, e.names)
	if err != nil {
		return nil, err
	}
	if e.stepNode == nil {
		st, err := parseTree("{{"+stepFunc+"}}", e.names)
		if err != nil {
			return nil, err
		}
		e.stepNode = st.Root.Nodes[0]
	}
	e.optionalEnv = optionalEnvKeys(tree.Root)
	instrument(tree.Root, e.stepNode)
	return tree, nil
}

// parseTree parses src, accepting the given function names, and rejects
// define/template/block.
func parseTree(src string, names map[string]any) (*parse.Tree, error) {
	trees, err := parse.Parse("expr", src, "", "", names)
	if err != nil {
		return nil, cleanParseError(err)
	}
	if len(trees) != 1 || trees["expr"] == nil {
		return nil, errors.New("template definitions (define, block) are not allowed")
	}
	tree := trees["expr"]
	var bad error
	walk(tree.Root, func(n parse.Node) {
		if _, ok := n.(*parse.TemplateNode); ok && bad == nil {
			bad = errors.New("template calls are not allowed")
		}
	})
	if bad != nil {
		return nil, bad
	}
	if err := checkTreeEnv(tree.Root); err != nil {
		return nil, err
	}
	return tree, nil
}

// cleanParseError drops text/template's "template: expr:" prefix, which
// names nothing the user wrote.
func cleanParseError(err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "template: ")
	msg = strings.TrimPrefix(msg, "expr:")
	if line, rest, ok := strings.Cut(msg, ": "); ok && isDigits(line) {
		msg = "line " + line + ": " + rest
	}
	return errors.New(strings.TrimSpace(msg))
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// instrument prepends the step node to every range body.
func instrument(n parse.Node, step parse.Node) {
	walk(n, func(n parse.Node) {
		r, ok := n.(*parse.RangeNode)
		if !ok {
			return
		}
		if r.List == nil {
			r.List = &parse.ListNode{NodeType: parse.NodeList, Pos: r.Pos}
		}
		r.List.Nodes = append([]parse.Node{step}, r.List.Nodes...)
	})
}

// walk visits every node of a parse tree, including nodes inside pipelines.
func walk(n parse.Node, visit func(parse.Node)) {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return
	}
	visit(n)
	switch x := n.(type) {
	case *parse.ListNode:
		for _, c := range x.Nodes {
			walk(c, visit)
		}
	case *parse.ActionNode:
		walk(x.Pipe, visit)
	case *parse.PipeNode:
		for _, c := range x.Cmds {
			walk(c, visit)
		}
	case *parse.CommandNode:
		for _, a := range x.Args {
			walk(a, visit)
		}
	case *parse.ChainNode:
		walk(x.Node, visit)
	case *parse.IfNode:
		walkBranch(&x.BranchNode, visit)
	case *parse.RangeNode:
		walkBranch(&x.BranchNode, visit)
	case *parse.WithNode:
		walkBranch(&x.BranchNode, visit)
	case *parse.TemplateNode:
		walk(x.Pipe, visit)
	}
}

func walkBranch(b *parse.BranchNode, visit func(parse.Node)) {
	walk(b.Pipe, visit)
	if b.List != nil {
		walk(b.List, visit)
	}
	if b.ElseList != nil {
		walk(b.ElseList, visit)
	}
}

// optionalEnvKeys finds `env "KEY"` calls whose result passes through
// `default`, as in {{ env "K" | default "x" }} or {{ default "x" (env "K") }}.
func optionalEnvKeys(root parse.Node) stringSet {
	out := stringSet{}
	walk(root, func(n parse.Node) {
		switch x := n.(type) {
		case *parse.PipeNode:
			for i, cmd := range x.Cmds {
				if key, ok := envCall(cmd); ok && i+1 < len(x.Cmds) && isCall(x.Cmds[i+1], "default") {
					out.add(key)
				}
			}
		case *parse.CommandNode:
			if !isCall(x, "default") {
				return
			}
			for _, a := range x.Args[1:] {
				if p, ok := a.(*parse.PipeNode); ok && len(p.Cmds) == 1 {
					if key, ok := envCall(p.Cmds[0]); ok {
						out.add(key)
					}
				}
			}
		}
	})
	return out
}

func isCall(cmd *parse.CommandNode, fn string) bool {
	if len(cmd.Args) == 0 {
		return false
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == fn
}

// envCall reports the literal key of an `env "KEY"` command.
func envCall(cmd *parse.CommandNode) (string, bool) {
	return literalCall(cmd, "env")
}

func literalCall(cmd *parse.CommandNode, fn string) (string, bool) {
	if !isCall(cmd, fn) || len(cmd.Args) != 2 {
		return "", false
	}
	s, ok := cmd.Args[1].(*parse.StringNode)
	if !ok {
		return "", false
	}
	return s.Text, true
}

// render evaluates a template string. When whole is true and the string is
// one action with no surrounding text, the pipeline's value is returned
// with its own type (a number stays a number).
func (e *evaluator) render(src string, whole bool) (any, error) {
	tree, err := e.parseTemplate(src)
	if err != nil {
		return nil, err
	}
	if whole {
		if action := singleAction(tree.Root); action != nil {
			return e.capture(tree, action)
		}
	}
	return e.execute(tree)
}

// singleAction returns the action of a template that is exactly one
// action without variable declarations.
func singleAction(root *parse.ListNode) *parse.ActionNode {
	if root == nil || len(root.Nodes) != 1 {
		return nil
	}
	a, ok := root.Nodes[0].(*parse.ActionNode)
	if !ok || len(a.Pipe.Decl) > 0 || a.Pipe.IsAssign {
		return nil
	}
	return a
}

// capture evaluates the action's pipeline and keeps its value, by turning
// {{ PIPE }} into {{ cairnCapture (PIPE) }}.
func (e *evaluator) capture(tree *parse.Tree, action *parse.ActionNode) (any, error) {
	pipe := action.Pipe
	ident := parse.NewIdentifier(captureFunc).SetTree(tree).SetPos(pipe.Pos)
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pipe.Pos, Args: []parse.Node{ident, pipe}}
	action.Pipe = &parse.PipeNode{NodeType: parse.NodePipe, Pos: pipe.Pos, Line: pipe.Line, Cmds: []*parse.CommandNode{cmd}}
	e.captured = nil
	if _, err := e.execute(tree); err != nil {
		return nil, err
	}
	v := e.captured
	e.captured = nil
	return normalize(v), nil
}

func (e *evaluator) execute(tree *parse.Tree) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("expression failed: %v", r)
		}
	}()
	t, err := e.base.AddParseTree("expr", tree)
	if err != nil {
		return "", err
	}
	w := &cappedWriter{max: e.limits.MaxOutput}
	if err := t.Execute(w, e.data); err != nil {
		return "", cleanExecError(err)
	}
	return w.buf.String(), nil
}

// cleanExecError shortens text/template's error prefix
// ("template: expr:1:3: executing \"expr\" at <.x>: error calling f: ...").
func cleanExecError(err error) error {
	var limit *limitError
	if errors.As(err, &limit) {
		return limit
	}
	msg := err.Error()
	if i := strings.Index(msg, `executing "expr" `); i >= 0 {
		msg = msg[i+len(`executing "expr" `):]
	}
	msg = strings.TrimPrefix(msg, "template: ")
	msg = strings.ReplaceAll(msg, captureFunc+" ", "")
	if i := strings.Index(msg, "error calling "); i >= 0 {
		if j := strings.Index(msg[i+len("error calling "):], ": "); j >= 0 {
			msg = msg[:i] + msg[i+len("error calling ")+j+2:]
		}
	}
	return errors.New(msg)
}

// limitError is raised when an evaluation exceeds a limit.
type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg + " (expression limit)" }
func (e *limitError) Is(target error) bool { return target == ErrLimit }

func limitf(format string, args ...any) error {
	return &limitError{msg: fmt.Sprintf(format, args...)}
}

type cappedWriter struct {
	buf bytes.Buffer
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.max {
		return 0, limitf("output exceeds %d bytes", w.max)
	}
	return w.buf.Write(p)
}

// checkFormat refuses printf widths and precisions that would allocate
// huge strings before any cap could see them.
func checkFormat(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		n := 0
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '*':
				return errors.New("printf: '*' widths are not allowed")
			case c >= '0' && c <= '9':
				n = n*10 + int(c-'0')
				if n > maxFormatWidth {
					return limitf("printf width or precision above %d", maxFormatWidth)
				}
				continue
			case c == '.' || c == '+' || c == '-' || c == '#' || c == ' ' || c == '[' || c == ']':
				n = 0
				continue
			}
			break
		}
	}
	return nil
}

// strictIndex is text/template's index, except that a missing map key is
// an error, as it is for field access under missingkey=error: a typo in a
// dependency's output name must not silently become an empty value.
func strictIndex(item any, keys ...any) (any, error) {
	v := reflect.ValueOf(item)
	for _, key := range keys {
		for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
			if v.IsNil() {
				return nil, errors.New("index of nil value")
			}
			v = v.Elem()
		}
		if !v.IsValid() {
			return nil, errors.New("index of nil value")
		}
		switch v.Kind() {
		case reflect.Map:
			k := reflect.ValueOf(key)
			if !k.IsValid() || !k.Type().AssignableTo(v.Type().Key()) {
				if k.IsValid() && k.Type().ConvertibleTo(v.Type().Key()) && k.Kind() == v.Type().Key().Kind() {
					k = k.Convert(v.Type().Key())
				} else {
					return nil, fmt.Errorf("index: key %v has the wrong type for %s", key, v.Type())
				}
			}
			next := v.MapIndex(k)
			if !next.IsValid() {
				return nil, fmt.Errorf("map has no entry for key %q", fmt.Sprint(key))
			}
			v = next
		case reflect.Slice, reflect.Array, reflect.String:
			i, ok := toFloat(key)
			if !ok || i != float64(int(i)) {
				return nil, fmt.Errorf("index: %v is not an integer", key)
			}
			if int(i) < 0 || int(i) >= v.Len() {
				return nil, fmt.Errorf("index out of range: %d", int(i))
			}
			v = v.Index(int(i))
		default:
			return nil, fmt.Errorf("can't index item of type %s", v.Type())
		}
	}
	if !v.IsValid() {
		return nil, nil
	}
	return v.Interface(), nil
}

// defaultFunc returns given unless it is empty (Sprig's default): pipe a
// value into it, {{ env "K" | default "x" }}.
func defaultFunc(def any, given ...any) any {
	if len(given) == 0 || isEmpty(given[0]) {
		return def
	}
	return given[0]
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	case reflect.Bool:
		return !rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return rv.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// hasFunc reports whether list contains needle (Sprig's order, so a list
// can be piped in: {{ .node.roles | has "web" }}).
func hasFunc(needle any, list any) (bool, error) {
	if list == nil {
		return false, nil
	}
	rv := reflect.ValueOf(list)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return false, fmt.Errorf("has: expected a list, got %s", nested.Describe(list))
	}
	for i := 0; i < rv.Len(); i++ {
		if looseEqual(rv.Index(i).Interface(), needle) {
			return true, nil
		}
	}
	return false, nil
}

// looseEqual compares scalars so that 1 (int) equals 1.0 (float64).
func looseEqual(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		if fb, ok := toFloat(b); ok {
			return fa == fb
		}
		return false
	}
	return reflect.DeepEqual(a, b)
}

func toFloat(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

func joinFunc(sep string, list any) (string, error) {
	if list == nil {
		return "", nil
	}
	rv := reflect.ValueOf(list)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return "", fmt.Errorf("join: expected a list, got %s", nested.Describe(list))
	}
	parts := make([]string, rv.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(rv.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

func splitFunc(sep, s string) ([]string, error) {
	parts := strings.SplitN(s, sep, maxSplitItems+1)
	if len(parts) > maxSplitItems {
		return nil, limitf("split yields more than %d items", maxSplitItems)
	}
	return parts, nil
}

func toJSONFunc(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJSON: %w", err)
	}
	return string(b), nil
}

func sha256Func(v any) string {
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		b = []byte(fmt.Sprint(x))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// normalize turns a Go value into the JSON-compatible form specs use:
// map[string]any, []any, string, bool, int64, float64 or nil.
func normalize(v any) any {
	switch v.(type) {
	case nil, string, bool, int64, float64:
		return v // most values: no walk to set up
	}
	out, _ := nested.MapAnyOrder(v, "", normalizeOne)
	return out
}

// normalizeOne is normalize's nested.Map function: it converts a scalar,
// and a map or list of another Go type into map[string]any or []any for
// Map to walk into.
func normalizeOne(p nested.Path, v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, int64, float64:
		return x, nested.SkipChildren
	case int:
		return int64(x), nested.SkipChildren
	case map[string]any, []any:
		return x, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nested.SkipChildren
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint()), nested.SkipChildren
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nested.SkipChildren
	case reflect.String:
		return rv.String(), nested.SkipChildren
	case reflect.Bool:
		return rv.Bool(), nested.SkipChildren
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return []any(nil), nested.SkipChildren
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[it.Key().String()] = it.Value().Interface()
		}
		return out, nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nested.SkipChildren
		}
		return normalizeOne(p, rv.Elem().Interface())
	}
	// Anything else goes through JSON, the form it would take on the wire.
	out, ok := nested.ViaJSON(v)
	if !ok {
		return out, nested.SkipChildren
	}
	return normalizeOne(p, out)
}
