package providers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// ExternalOptions configures the external kind.
type ExternalOptions struct {
	// Docker is the docker binary that runs image resources: a path, or a
	// name looked up on PATH ("docker" when empty).
	Docker string
	// Timeout bounds each run of a program when the spec sets none
	// (5 minutes when zero).
	Timeout time.Duration
	// Version is sent to programs as "version" ("1" when empty).
	Version string
	// Verbose is sent to programs as "verbose" for every step; a step
	// also sends it when its execution asked for it (Env.Verbose).
	Verbose bool
	// PlugsDir holds the plugs programs may ask for, one directory each
	// (PlugsDir/NAME); empty: none, so a required plug is refused.
	PlugsDir string
}

// externalProvider runs resources implemented by programs that speak the
// Deployster protocol (see external_protocol.go): a program path or argv,
// or an image run with `docker run -i --rm`. The program owns the state:
// Read asks it (state action), Apply runs the actions it asks for and asks
// again, expecting VALID. The engine diffs two attributes: the pending
// actions (desired: none), and config, which reads back as the desired
// config when the program answers VALID and as its staleState otherwise.
//
// Init answers are cached per program (resolved argv and image), shared by
// concurrent steps. Programs see a clean environment (see commandEnv) plus
// the spec's env, run in the node's root, and are killed with their whole
// process group when they run past the timeout.
type externalProvider struct {
	opts  ExternalOptions
	proto *extProtocol

	mu       sync.Mutex
	inits    map[string]*extInitCall // resolved program and image → init
	declared map[string]*extInit     // program as written and image → last init
}

// extInit is a checked init answer with its config schema compiled.
type extInit struct {
	resp   extInitResponse
	config *jsonschema.Schema // nil: any object
	plugs  map[string]extMount
}

// extInitCall is one init run that concurrent callers share.
type extInitCall struct {
	done chan struct{}
	init *extInit
	err  error
}

// NewExternal returns the provider of kind external.
func NewExternal(opts ExternalOptions) Provider {
	if opts.Docker == "" {
		opts.Docker = "docker"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.Version == "" {
		opts.Version = "1"
	}
	proto, err := newExtProtocol()
	if err != nil {
		// The schemas are constants of the program; a broken one is a bug.
		panic(fmt.Sprintf("external: %v", err))
	}
	return &externalProvider{opts: opts, proto: proto, inits: map[string]*extInitCall{}, declared: map[string]*extInit{}}
}

func (*externalProvider) Kind() string { return "external" }

var externalAttrs = map[string]kinds.AttrKind{
	"program": kinds.Parameter, "image": kinds.Parameter, "env": kinds.Parameter, "timeout": kinds.Parameter,
	// Aliases of dependencies: a target's name as written, or, once the
	// step resolved it, the record the program is sent (see depRecords).
	kinds.DepAliasAttr: kinds.Parameter,
	// The program judges config against the real thing: a VALID answer
	// reports config as current, a STALE one its staleState, and the
	// pending actions are compared with none.
	"config":  kinds.Property,
	"actions": kinds.Property,
}

func (*externalProvider) Attributes() map[string]kinds.AttrKind { return externalAttrs }

// extOutputLimit bounds what a program may print on stdout.
const extOutputLimit = 10 << 20

// extSpec is a canonical external spec.
type extSpec struct {
	Program []string // as written; empty for an image
	Image   string
	Config  map[string]any
	Env     map[string]any
	Timeout time.Duration
	// Deps are the resolved dependency records by alias: {name, type,
	// state}; aliases still naming their target are left out.
	Deps map[string]any
}

func parseExtSpec(spec model.Spec) (*extSpec, error) {
	if err := checkAttrs("external", spec, externalAttrs); err != nil {
		return nil, err
	}
	s := &extSpec{Config: map[string]any{}}
	switch x := spec["program"].(type) {
	case nil:
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, configErrorf("program", "empty program path")
		}
		s.Program = []string{x}
	default:
		argv, _, err := specCommand(spec, "program")
		if err != nil {
			return nil, err
		}
		s.Program = argv
	}
	image, _, err := specString(spec, "image")
	if err != nil {
		return nil, err
	}
	s.Image = strings.TrimSpace(image)
	switch {
	case len(s.Program) > 0 && s.Image != "":
		return nil, configErrorf("program", "give program or image, not both")
	case len(s.Program) == 0 && s.Image == "":
		return nil, configErrorf("program", "required (a program path or argv, or an image)")
	}
	if c, ok := spec["config"]; ok && c != nil {
		m, ok := NormalizeValue(c).(map[string]any)
		if !ok {
			return nil, configErrorf("config", "want an object, got %s", nested.Describe(c))
		}
		s.Config = m
	}
	if e, ok := spec["env"]; ok && e != nil {
		env, err := canonicalEnv(NormalizeValue(e))
		if err != nil {
			return nil, err
		}
		s.Env = env
	}
	if t, ok := spec["timeout"]; ok && t != nil {
		if s.Timeout, err = CanonicalDuration(t); err != nil {
			return nil, configErrorf("timeout", "%v", err)
		}
	}
	if d, ok := spec[kinds.DepAliasAttr]; ok && d != nil {
		if s.Deps, err = parseExtDeps(NormalizeValue(d)); err != nil {
			return nil, err
		}
	}
	if a, ok := spec["actions"]; ok && a != nil {
		if list, ok := a.([]any); !ok || len(list) > 0 {
			return nil, configErrorf("actions", "is reported by the program, not set (leave it out)")
		}
	}
	return s, nil
}

// Canonicalize checks the spec and writes it in one form: program as an
// argv list (or image), config an object, timeout a duration string, and
// the desired pending actions: none.
func (*externalProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	s, err := parseExtSpec(spec)
	if err != nil {
		return nil, err
	}
	out := model.Spec{"config": s.Config, "actions": []any{}}
	if len(s.Program) > 0 {
		argv := make([]any, len(s.Program))
		for i, a := range s.Program {
			argv[i] = a
		}
		out["program"] = argv
	} else {
		out["image"] = s.Image
	}
	if s.Env != nil {
		out["env"] = s.Env
	}
	if s.Timeout > 0 {
		out["timeout"] = s.Timeout.String()
	}
	if d := NormalizeValue(spec[kinds.DepAliasAttr]); d != nil {
		out[kinds.DepAliasAttr] = d
	}
	return out, nil
}

// Read initializes the program (once per program) and asks for the state.
func (p *externalProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	if len(want) == 0 {
		return State{}, configErrorf("", "cannot ask about external resource %s without its spec (program and config)", env.Name)
	}
	r, _, resp, err := p.current(ctx, env, want)
	if err != nil {
		return State{}, err
	}
	return r.stateOf(resp), nil
}

// Apply asks for the state again, runs the actions a STALE answer lists,
// in order, and asks once more: anything but VALID then is an error.
func (p *externalProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	if env.Noop {
		return have, nil
	}
	r, in, resp, err := p.current(ctx, env, want)
	if err != nil {
		return State{}, err
	}
	if resp.Status == extStatusValid {
		return r.stateOf(resp), nil
	}
	ran := make([]string, 0, len(resp.Actions))
	log := newCapture(extLogLimit)
	for _, a := range resp.Actions {
		res, err := r.run(ctx, "action "+a.Name, a, r.stateRequest(nil), extActionOutput)
		if err != nil {
			return State{}, err
		}
		writeActionLog(log, a.Name, res)
		// What an action prints may echo its config: it goes to the
		// step's result, redacted there, never to the worker's log.
		slog.DebugContext(ctx, "external action ran", "resource", env.Name, "program", r.name, "action", a.Name)
		ran = append(ran, a.Name)
	}
	after, err := r.state(ctx, in, "state after actions")
	if err != nil {
		return State{}, err
	}
	if after.Status != extStatusValid {
		return State{}, r.errorf("state after actions", "still STALE after running %s; it now asks for %s",
			strings.Join(ran, ", "), strings.Join(actionNames(after.Actions), ", "))
	}
	st := r.stateOf(after)
	if kept, cut := log.result(); len(kept) > 0 {
		st.Log = outputText(kept, cut)
	}
	return st, nil
}

// Delete cannot reach the program's config from a State alone (config may
// hold secrets, so a State never keeps it): it needs DeleteSpec.
func (p *externalProvider) Delete(ctx context.Context, env Env, have State) error {
	return p.DeleteSpec(ctx, env, nil, have)
}

// DeleteSpec runs the program's delete_action on the object have
// describes, then asks for the state, expecting the object gone. A program
// that declares no delete_action cannot delete: that is a ConfigError.
func (p *externalProvider) DeleteSpec(ctx context.Context, env Env, want model.Spec, have State) error {
	if !have.Exists {
		return nil
	}
	if want["program"] == nil && want["image"] == nil {
		return configErrorf("", "cannot delete external resource %s without its spec (program and config)", env.Name)
	}
	if env.Noop {
		return nil
	}
	r, in, err := p.started(ctx, env, want)
	if err != nil {
		return err
	}
	if in.resp.DeleteAction == nil {
		return &ConfigError{Err: r.errorf("delete", "declares no delete_action, so Cairn cannot delete what it manages")}
	}
	if _, err := r.run(ctx, "delete", *in.resp.DeleteAction, r.stateRequest(have.Outputs), extActionOutput); err != nil {
		return err
	}
	after, err := r.state(ctx, in, "state after delete")
	if err != nil {
		return err
	}
	if st := r.stateOf(after); st.Exists {
		return r.errorf("state after delete", "still reports the object (status %s) after delete_action", after.Status)
	}
	return nil
}

// Precheck initializes the program (once per program) and checks want's
// config against its config_schema and its plugs against the plugs
// directory, without asking for the state: an apply's prepare runs it for
// every external step before the first action, so a bad config anywhere
// applies nothing. Errors at config values still holding expressions or
// refs wait for the run. Its cost is one init run per program.
func (p *externalProvider) Precheck(ctx context.Context, env Env, want model.Spec) error {
	r, err := p.runner(env, want)
	if err != nil {
		return err
	}
	_, err = r.initChecked(ctx, true)
	return err
}

// Reversible reports whether the program declared a delete_action (the
// undo of a create), as far as its init answer is known; before any init
// nothing says otherwise.
func (p *externalProvider) Reversible(want model.Spec) bool {
	s, err := parseExtSpec(want)
	if err != nil {
		return false
	}
	p.mu.Lock()
	in, ok := p.declared[s.declaredKey()]
	p.mu.Unlock()
	return !ok || in.resp.DeleteAction != nil
}

// Compensate undoes ch with the program's own actions: a created object is
// removed by delete_action, an updated or deleted one is brought back by
// restore_action with its previous state on stdin. Without the action the
// change is irreversible.
func (p *externalProvider) Compensate(ctx context.Context, env Env, want model.Spec, ch Change) error {
	if ch.Noop || ch.Action == "" || ch.Action == model.ActionNoop {
		return nil
	}
	r, in, err := p.started(ctx, env, want)
	if err != nil {
		return err
	}
	if !ch.Before.Exists {
		if in.resp.DeleteAction == nil {
			return r.errorf("compensate", "declares no delete_action to remove what was created: %w", ErrIrreversible)
		}
		_, err := r.run(ctx, "compensate: delete", *in.resp.DeleteAction, r.stateRequest(ch.After.Outputs), extActionOutput)
		return err
	}
	if in.resp.RestoreAction == nil {
		return r.errorf("compensate", "declares no restore_action to bring back the previous state: %w", ErrIrreversible)
	}
	_, err = r.run(ctx, "compensate: restore", *in.resp.RestoreAction, r.stateRequest(ch.Before.Outputs), extActionOutput)
	return err
}

// List lists the instances of the program q.Spec names (see
// ListInstances); q.Names keeps only the instances of those names.
func (p *externalProvider) List(ctx context.Context, env Env, q ListQuery) ([]Listed, error) {
	items, err := p.ListInstances(ctx, env, q.Spec)
	if err != nil || len(q.Names) == 0 {
		return items, err
	}
	return slices.DeleteFunc(items, func(l Listed) bool { return !slices.Contains(q.Names, l.Name) }), nil
}

// ListInstances runs the program's list_action and returns each instance
// as a resource: the spec's program (or image) with the instance's config,
// its platform id the instance's id (its name when it gives none). A
// program whose init answer declares no list_action cannot be listed (a
// ConfigError saying so). The config must be what the program's state
// action finds the same object by, so that the resource adopts it.
func (p *externalProvider) ListInstances(ctx context.Context, env Env, spec model.Spec) ([]Listed, error) {
	r, in, err := p.started(ctx, env, spec)
	if err != nil {
		return nil, err
	}
	if in.resp.ListAction == nil {
		return nil, &ConfigError{Err: r.errorf("list", "declares no list_action, so its instances cannot be listed")}
	}
	var resp extListResponse
	if err := r.call(ctx, "list", *in.resp.ListAction, r.stateRequest(nil), "list-response", &resp, nil); err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(resp.Instances))
	for _, inst := range resp.Instances {
		ls := model.Spec{"config": NormalizeValue(inst.Config)}
		if len(r.spec.Program) > 0 {
			argv := make([]any, len(r.spec.Program))
			for i, a := range r.spec.Program {
				argv[i] = a
			}
			ls["program"] = argv
		} else {
			ls["image"] = r.spec.Image
		}
		out = append(out, Listed{Name: inst.Name, ID: cmp.Or(inst.ID, inst.Name), Labels: inst.Labels, LabelNames: inst.LabelNames, Spec: ls})
	}
	return out, nil
}

// --- running programs ---

// extRunner runs one resource's program.
type extRunner struct {
	p    *externalProvider
	env  Env
	spec *extSpec
	argv []string // program argv resolved on the node; nil for an image
	dir  string
	name string // program or image, for messages and the "type" field
	// plugs are the host directories of the plugs the init answer asked
	// for, by name (set by init).
	plugs map[string]extMount
}

func (p *externalProvider) runner(env Env, want model.Spec) (*extRunner, error) {
	s, err := parseExtSpec(want)
	if err != nil {
		return nil, err
	}
	r := &extRunner{p: p, env: env, spec: s, name: s.Image}
	if len(s.Program) > 0 {
		r.name = s.Program[0]
		prog, err := resolveProgram(env.Node, s.Program[0])
		if err != nil {
			return nil, err
		}
		r.argv = append([]string{prog}, s.Program[1:]...)
	}
	if r.dir, err = env.Node.WorkDir(""); err != nil {
		return nil, err
	}
	return r, nil
}

// resolveProgram finds a program: a bare name on PATH, a path with a
// slash inside the node's root (absolute as given on the control plane).
func resolveProgram(node Node, prog string) (string, error) {
	resolved := prog
	if strings.Contains(prog, "/") {
		if node.Root == "" {
			if !filepath.IsAbs(prog) {
				return "", configErrorf("program", "relative program path %q needs a node with a root; give an absolute path", prog)
			}
			resolved = filepath.Clean(prog)
		} else {
			var err error
			if resolved, err = node.Resolve(prog); err != nil {
				return "", &ConfigError{Attr: "program", Err: err}
			}
		}
	}
	found, err := exec.LookPath(resolved)
	if err != nil {
		return "", configErrorf("program", "%s: not found or not executable", prog)
	}
	if !filepath.IsAbs(found) {
		if abs, err := filepath.Abs(found); err == nil {
			found = abs
		}
	}
	return found, nil
}

func (s *extSpec) declaredKey() string {
	return s.Image + "\x00" + strings.Join(s.Program, "\x00")
}

// cacheKey names a program's init answer: the program and whether it was
// asked to be verbose, which the init request carries.
func (r *extRunner) cacheKey() string {
	return fmt.Sprintf("%s\x00%s\x00%t", r.spec.Image, strings.Join(r.argv, "\x00"), r.verbose())
}

func (r *extRunner) verbose() bool { return r.p.opts.Verbose || r.env.Verbose }

func (r *extRunner) typeName() string { return r.name }

func (r *extRunner) initRequest() extInitRequest {
	return extInitRequest{Name: cmp.Or(r.env.Name, "unnamed"), Type: r.typeName(), Version: r.p.opts.Version, Verbose: r.verbose()}
}

func (r *extRunner) stateRequest(state map[string]any) extStateRequest {
	return extStateRequest{extInitRequest: r.initRequest(), Config: r.spec.Config, State: state, Dependencies: r.spec.Deps}
}

// started is the runner of want's program with its checked init answer
// (runner, then init): what every call but a precheck starts from.
func (p *externalProvider) started(ctx context.Context, env Env, want model.Spec) (*extRunner, *extInit, error) {
	r, err := p.runner(env, want)
	if err != nil {
		return nil, nil, err
	}
	in, err := r.init(ctx)
	if err != nil {
		return nil, nil, err
	}
	return r, in, nil
}

// current is started, then the program asked for the state.
func (p *externalProvider) current(ctx context.Context, env Env, want model.Spec) (*extRunner, *extInit, extStateResponse, error) {
	r, in, err := p.started(ctx, env, want)
	if err != nil {
		return nil, nil, extStateResponse{}, err
	}
	resp, err := r.state(ctx, in, "state")
	if err != nil {
		return nil, nil, extStateResponse{}, err
	}
	return r, in, resp, nil
}

// init returns the program's checked init answer, running it once per
// program and sharing the run among concurrent callers, then checks the
// spec's config against the program's config schema.
func (r *extRunner) init(ctx context.Context) (*extInit, error) {
	return r.initChecked(ctx, false)
}

// initChecked is init; pending leaves out the schema errors at values of
// the config still holding expressions or refs (see awaitsValue).
func (r *extRunner) initChecked(ctx context.Context, pending bool) (*extInit, error) {
	in, err := r.p.initOnce(ctx, r)
	if err != nil {
		return nil, err
	}
	r.plugs = in.plugs
	if in.config == nil {
		return in, nil
	}
	config := NormalizeValue(r.spec.Config)
	err = in.config.Validate(config)
	if err == nil {
		return in, nil
	}
	var excused func(*jsonschema.ValidationError) bool
	if pending {
		excused = func(e *jsonschema.ValidationError) bool { return awaitsValue(e, config) }
	}
	what, ok := describeSchemaError(err, excused, r.p.proto.printer)
	if !ok {
		return in, nil
	}
	return nil, &ConfigError{Attr: "config", Err: fmt.Errorf("does not match the config_schema of %s: %s", r.name, what)}
}

func (p *externalProvider) initOnce(ctx context.Context, r *extRunner) (*extInit, error) {
	key := r.cacheKey()
	p.mu.Lock()
	call, ok := p.inits[key]
	if !ok {
		call = &extInitCall{done: make(chan struct{})}
		p.inits[key] = call
		p.mu.Unlock()
		// The run is shared, so one caller's cancellation must not fail
		// the others: only the timeout bounds it.
		call.init, call.err = r.runInit(context.WithoutCancel(ctx))
		p.mu.Lock()
		if call.err != nil {
			delete(p.inits, key) // a failure is not remembered
		} else {
			p.declared[r.spec.declaredKey()] = call.init
		}
		p.mu.Unlock()
		close(call.done)
	} else {
		p.mu.Unlock()
	}
	select {
	case <-call.done:
		return call.init, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *extRunner) runInit(ctx context.Context) (*extInit, error) {
	var resp extInitResponse
	var doc any
	if err := r.call(ctx, "init", extAction{}, r.initRequest(), "init-response", &resp, &doc); err != nil {
		return nil, err
	}
	in := &extInit{resp: resp}
	if obj, ok := doc.(map[string]any); ok && obj["config_schema"] != nil {
		sch, err := compileJSONSchemaDoc("https://external.cairn.invalid/config.json", obj["config_schema"])
		if err != nil {
			var sve *jsonschema.SchemaValidationError
			if errors.As(err, &sve) {
				what, _ := describeSchemaError(sve.Err, nil, r.p.proto.printer)
				err = errors.New(what)
			}
			return nil, &ConfigError{Err: r.errorf("init", "config_schema does not compile: %v", err)}
		}
		in.config = sch
	}
	plugs, err := r.p.mountPlugs(resp.Plugs, r.spec.Image != "")
	if err != nil {
		return nil, &ConfigError{Err: r.errorf("init", "%w", err)}
	}
	in.plugs = plugs
	return in, nil
}

// state runs the state action and checks the answer.
func (r *extRunner) state(ctx context.Context, in *extInit, phase string) (extStateResponse, error) {
	var resp extStateResponse
	err := r.call(ctx, phase, in.resp.StateAction, r.stateRequest(nil), "state-response", &resp, nil)
	return resp, err
}

// stateOf turns a state answer into a State: VALID exists; STALE exists
// when it reports a staleState. The pending actions are the attribute.
func (r *extRunner) stateOf(resp extStateResponse) State {
	current := resp.State
	exists := resp.Status == extStatusValid
	if !exists && resp.StaleState != nil {
		current, exists = resp.StaleState, true
	}
	pending := make([]any, 0, len(resp.Actions))
	for _, a := range resp.Actions {
		item := map[string]any{"name": a.Name}
		if a.Description != "" {
			item["description"] = a.Description
		}
		pending = append(pending, item)
	}
	st := State{Exists: exists, Attrs: map[string]any{"actions": pending}}
	switch {
	case resp.Status == extStatusValid:
		st.Attrs["config"] = NormalizeValue(r.spec.Config)
	case exists:
		st.Attrs["config"] = NormalizeValue(current)
	}
	if exists {
		st.ID = r.env.Name
		if id, ok := current["id"].(string); ok && id != "" {
			st.ID = id
		}
		st.Outputs = NormalizeValue(current).(map[string]any)
	}
	return st
}

// call runs one step whose answer is a protocol message: checked against
// the schema named, decoded into out (and, when doc is given, kept there
// as decoded JSON).
func (r *extRunner) call(ctx context.Context, phase string, a extAction, stdin any, schema string, out any, doc *any) error {
	res, err := r.run(ctx, phase, a, stdin, extProtocolOutput)
	if err != nil {
		return err
	}
	if err := r.p.proto.decode(schema, res.Stdout, out); err != nil {
		var mis *extMisbehaviour
		if errors.As(err, &mis) {
			return &ConfigError{Err: r.errorf(phase, "%s", mis.msg)}
		}
		return r.errorf(phase, "%v", err)
	}
	if doc != nil {
		*doc, _ = decodeJSONValue(res.Stdout)
	}
	return nil
}

// run runs one step of the program with stdin as its JSON input, keeping
// what out allows of stdout and stderr. A non-zero exit, a timeout and an
// oversized protocol answer are errors naming the program and the phase.
func (r *extRunner) run(ctx context.Context, phase string, a extAction, stdin any, out extOutput) (commandResult, error) {
	input, err := r.encodeRequest(stdin)
	if err != nil {
		return commandResult{}, r.errorf(phase, "%v", err)
	}
	argv, err := r.command(a)
	if err != nil {
		return commandResult{}, err
	}
	timeout := r.spec.Timeout
	if timeout <= 0 {
		timeout = r.p.opts.Timeout
	}
	res, err := runCommand(ctx, command{Argv: argv, Dir: r.dir, Env: append(commandEnv(r.env.Node, r.spec.Env), r.plugEnv()...), Stdin: input, Timeout: timeout,
		Stdout: out.Stdout, Stderr: out.Stderr})
	switch {
	case errors.Is(err, errTimeout):
		return res, r.errorf(phase, "timed out after %s; its process group was killed%s", timeout, stderrHint(res.Stderr))
	case err != nil && ctx.Err() != nil:
		return res, r.errorf(phase, "%w", ctx.Err())
	case err != nil:
		if errors.Is(err, exec.ErrNotFound) || strings.HasPrefix(err.Error(), "start ") {
			return res, &ConfigError{Err: r.errorf(phase, "%v", err)}
		}
		return res, r.errorf(phase, "%v", err)
	case res.ExitCode != 0:
		return res, r.errorf(phase, "exited %d%s", res.ExitCode, stderrHint(res.Stderr))
	case out.Protocol && len(res.Stdout) > extOutputLimit:
		return res, &ConfigError{Err: r.errorf(phase, "printed more than %d MiB on stdout", extOutputLimit>>20)}
	}
	return res, nil
}

// encodeRequest checks a message Cairn sends against its schema.
func (r *extRunner) encodeRequest(msg any) ([]byte, error) {
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	name := "state-request"
	if _, ok := msg.(extInitRequest); ok {
		name = "init-request"
	}
	doc, err := decodeJSONValue(raw)
	if err != nil {
		return nil, err
	}
	if err := r.p.proto.check(name, doc); err != nil {
		return nil, fmt.Errorf("request breaks the protocol: %v", err)
	}
	return raw, nil
}

// command builds the argv of one step: the program (or the action's
// entrypoint) with the action's args, or docker running the image.
func (r *extRunner) command(a extAction) ([]string, error) {
	image := cmp.Or(a.Image, r.spec.Image)
	if image != "" {
		argv := []string{r.p.opts.Docker, "run", "-i", "--rm"}
		keys := make([]string, 0, len(r.spec.Env))
		for k := range r.spec.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			// Values travel in docker's environment, not its argv, so
			// secrets stay out of process listings.
			argv = append(argv, "-e", k)
		}
		argv = append(argv, r.plugVolumes()...)
		if a.Entrypoint != "" {
			argv = append(argv, "--entrypoint", a.Entrypoint)
		}
		argv = append(argv, image)
		return append(argv, a.Args...), nil
	}
	base := r.argv
	if a.Entrypoint != "" {
		prog, err := resolveProgram(r.env.Node, a.Entrypoint)
		if err != nil {
			return nil, &ConfigError{Err: r.errorf("entrypoint", "%v", err)}
		}
		base = []string{prog}
	}
	return append(slices.Clone(base), a.Args...), nil
}

// ExternalError is a failure of an external program, naming the program
// (or image) and the phase of the protocol it failed in.
type ExternalError struct {
	Program string
	Phase   string
	Err     error
}

func (e *ExternalError) Error() string {
	return fmt.Sprintf("external program %s (%s): %v", e.Program, e.Phase, e.Err)
}

func (e *ExternalError) Unwrap() error { return e.Err }

func (r *extRunner) errorf(phase, format string, args ...any) error {
	return &ExternalError{Program: r.name, Phase: phase, Err: fmt.Errorf(format, args...)}
}

func actionNames(actions []extAction) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.Name
	}
	return out
}
