package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// execProvider runs a command (Puppet's exec, Fuel's shell task). It has
// no lasting state of its own: its guards decide whether it runs, with
// Puppet's semantics — creates skips it when the path exists, unless skips
// it when that command exits 0, onlyif runs it only when that command exits
// 0 — and a skipped exec is unchanged. Guards run in noop too, as Puppet
// runs them, so they must only look; but a dry-run runs no command unless
// asked (Env.SkipGuards): creates, a path check, is still evaluated, and an
// exec with unless or onlyif is planned to run "unless its guard says
// otherwise". A run is compensated by its undo command; without one the
// change is irreversible.
//
// Commands see a clean environment (PATH, HOME, LANG, LC_ALL, TZ, TMPDIR,
// USER, LOGNAME from the worker, CAIRN_NODE and CAIRN_NODE_ROOT, then the
// spec's env), so the worker's own settings and credentials do not leak
// into them. On a local node HOME and the default working directory are the
// node's root.
type execProvider struct{}

// NewExec returns the provider of kind exec.
func NewExec() Provider { return execProvider{} }

func (execProvider) Kind() string { return "exec" }

var execAttrs = map[string]kinds.AttrKind{
	"command": kinds.Parameter,
	"argv":    kinds.Parameter,
	"env":     kinds.Parameter,
	"cwd":     kinds.Parameter,
	"timeout": kinds.Parameter,
	"creates": kinds.Parameter,
	"unless":  kinds.Parameter,
	"onlyif":  kinds.Parameter,
	"undo":    kinds.Parameter,
	"returns": kinds.Parameter,
	// unchangedReturns: exit codes that mean the command ran and changed
	// nothing (puppet apply --detailed-exitcodes exits 0 then, 2 on changes).
	"unchangedReturns": kinds.Parameter,
	// refresh is the command a refresh runs (default: command);
	// refreshOnly runs the exec only when refreshed.
	"refresh":     kinds.Parameter,
	"refreshOnly": kinds.Parameter,
}

func (execProvider) Attributes() map[string]kinds.AttrKind { return execAttrs }

// defaultPath is PATH when the worker has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Canonicalize checks the spec and puts it in one form: command (a shell
// string) or argv (a list), env as an object of strings, timeout as a Go
// duration string, returns as a list of exit codes (default [0]) and
// unchangedReturns, when given, as a list too.
func (execProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs("exec", spec, execAttrs); err != nil {
		return nil, err
	}
	out := model.Spec{}
	hasCommand, hasArgv := spec["command"] != nil, spec["argv"] != nil
	switch {
	case hasCommand && hasArgv:
		return nil, configErrorf("command", "give command or argv, not both")
	case !hasCommand && !hasArgv:
		return nil, configErrorf("command", "required (a shell command, or argv)")
	case hasCommand:
		s, _, err := specString(spec, "command")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, configErrorf("command", "empty command")
		}
		out["command"] = s
	default:
		argv, ok := spec["argv"].([]any)
		if !ok {
			return nil, configErrorf("argv", "want a list of strings, got %s", nested.Describe(spec["argv"]))
		}
		if _, _, err := specCommand(spec, "argv"); err != nil {
			return nil, err
		}
		out["argv"] = argv
	}
	for _, k := range []string{"unless", "onlyif", "undo", "refresh"} {
		if _, ok, err := specCommand(spec, k); err != nil {
			return nil, err
		} else if ok {
			out[k] = spec[k]
		}
	}
	for _, k := range []string{"cwd", "creates"} {
		if s, ok, err := specString(spec, k); err != nil {
			return nil, err
		} else if ok && s != "" {
			if out[k], err = canonicalSpecPath(k, s); err != nil {
				return nil, err
			}
		}
	}
	if v := spec["env"]; v != nil {
		env, err := canonicalEnv(v)
		if err != nil {
			return nil, err
		}
		out["env"] = env
	}
	if v := spec["timeout"]; v != nil {
		d, err := CanonicalDuration(v)
		if err != nil {
			return nil, configErrorf("timeout", "%v", err)
		}
		if d > 0 {
			out["timeout"] = d.String()
		}
	}
	codes := []any{int64(0)}
	if v := spec["returns"]; v != nil {
		var err error
		if codes, err = canonicalReturns(v); err != nil {
			return nil, err
		}
	}
	out["returns"] = codes
	switch v := spec["refreshOnly"].(type) {
	case nil:
	case bool:
		if v {
			out["refreshOnly"] = true
		}
	default:
		return nil, configErrorf("refreshOnly", "want true or false, got %s", nested.Describe(v))
	}
	if v := spec["unchangedReturns"]; v != nil {
		unchanged, err := canonicalReturns(v)
		if err != nil {
			return nil, configErrorf("unchangedReturns", "%v", err)
		}
		out["unchangedReturns"] = unchanged
	}
	return out, nil
}

// canonicalEnv reads env as an object or a list of "KEY=value".
func canonicalEnv(v any) (map[string]any, error) {
	out := map[string]any{}
	set := func(k string, val any) error {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return configErrorf("env", "bad variable name %q", k)
		}
		switch x := NormalizeValue(val).(type) {
		case string:
			out[k] = x
		case bool, int64, float64:
			out[k] = fmt.Sprint(x)
		case nil:
			out[k] = ""
		default:
			return configErrorf("env."+k, "want a string, got %s", nested.Describe(val))
		}
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if err := set(k, val); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			k, val, found := strings.Cut(s, "=")
			if !ok || !found {
				return nil, configErrorf(fmt.Sprintf("env[%d]", i), "want \"KEY=value\"")
			}
			if err := set(k, val); err != nil {
				return nil, err
			}
		}
	default:
		return nil, configErrorf("env", "want an object or a list of \"KEY=value\", got %s", nested.Describe(v))
	}
	return out, nil
}

// canonicalReturns reads the accepted exit codes: one number or a list.
func canonicalReturns(v any) ([]any, error) {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	if len(list) == 0 {
		return nil, configErrorf("returns", "empty list of exit codes")
	}
	out := make([]any, len(list))
	for i, e := range list {
		var code int64
		switch x := e.(type) {
		case int64:
			code = x
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, configErrorf("returns", "exit code %q is not a number", x)
			}
			code = n
		default:
			return nil, configErrorf("returns", "want exit codes, got %s", nested.Describe(e))
		}
		if code < 0 || code > 255 {
			return nil, configErrorf("returns", "exit code %d out of range 0-255", code)
		}
		out[i] = code
	}
	return out, nil
}

// Read evaluates the guards. Exists means "nothing to do": a guard says the
// command need not run, and Outputs["skipped"] says which.
func (x execProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	if creates, ok := want["creates"].(string); ok {
		host, err := env.Node.Resolve(creates)
		if err != nil {
			return State{}, fmt.Errorf("creates: %w", err)
		}
		if _, err := os.Lstat(host); err == nil {
			return skipped(fmt.Sprintf("creates %s exists", creates)), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return State{}, fmt.Errorf("creates: %w", err)
		}
	}
	if env.SkipGuards {
		if guards := guardCommands(want); len(guards) > 0 {
			return State{Outputs: map[string]any{guardNotRunOutput: guardNotRunNote(guards)}}, nil
		}
	}
	if want["unless"] != nil {
		res, err := x.run(ctx, env, want, "unless")
		if err != nil {
			return State{}, err
		}
		if res.ExitCode == 0 {
			return skipped("unless exited 0"), nil
		}
	}
	if want["onlyif"] != nil {
		res, err := x.run(ctx, env, want, "onlyif")
		if err != nil {
			return State{}, err
		}
		if res.ExitCode != 0 {
			return skipped(fmt.Sprintf("onlyif exited %d", res.ExitCode)), nil
		}
	}
	return State{}, nil
}

// changedOutput is the output of an exec with unchangedReturns: false when
// its exit code said it changed nothing, so its outcome is unchanged.
const changedOutput = "changed"

// guardNotRunOutput is the output of a read that did not run the exec's
// guard commands; it holds the note a plan shows.
const guardNotRunOutput = "guardNotRun"

// guardCommands names the guards of want that are commands.
func guardCommands(want model.Spec) []string {
	var out []string
	for _, k := range []string{"unless", "onlyif"} {
		if want[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

// guardNotRunNote is what a dry-run says of an exec whose guards it did
// not run.
func guardNotRunNote(guards []string) string {
	return fmt.Sprintf("would run unless its guard says otherwise (%s not run in a dry-run; ask for guards to run them)", strings.Join(guards, " and "))
}

func skipped(reason string) State {
	return State{Exists: true, Outputs: map[string]any{"skipped": reason}}
}

// Plan runs the command unless a guard held or it waits for a refresh
// (refreshOnly).
func (execProvider) Plan(want model.Spec, have State) model.Action {
	if have.Exists || want["refreshOnly"] == true {
		return model.ActionNoop
	}
	return model.ActionRun
}

// RefreshAction runs the exec on a refresh unless a guard held, or its
// own run (planned) already is its refresh: it has no refresh command.
func (execProvider) RefreshAction(want model.Spec, have State, planned model.Action) model.Action {
	if have.Exists || (planned == model.ActionRun && want["refresh"] == nil) {
		return model.ActionNoop
	}
	return model.ActionRun
}

// Refresh runs the refresh command, or the command when there is none,
// as Apply runs the command.
func (x execProvider) Refresh(ctx context.Context, env Env, want model.Spec, _ State) (State, error) {
	if want["refresh"] != nil {
		return x.runChecked(ctx, env, want, "refresh")
	}
	return x.runChecked(ctx, env, want, commandAttr(want))
}

// commandAttr is the attribute holding the command: command or argv.
func commandAttr(want model.Spec) string {
	if want["argv"] != nil {
		return "argv"
	}
	return "command"
}

// Apply runs the command; an exit code outside returns is an error. With
// unchangedReturns, Outputs["changed"] says whether the exit code was one
// of them (false) or not (true): the engine reports the former unchanged.
func (x execProvider) Apply(ctx context.Context, env Env, want model.Spec, _ State) (State, error) {
	return x.runChecked(ctx, env, want, commandAttr(want))
}

// runChecked runs the command in attr and checks its exit code against
// returns and unchangedReturns.
func (x execProvider) runChecked(ctx context.Context, env Env, want model.Spec, attr string) (State, error) {
	res, err := x.run(ctx, env, want, attr)
	if err != nil {
		return State{}, err
	}
	out := State{Exists: true, Outputs: runOutputs(res)}
	if !acceptedCode(want["returns"], res.ExitCode) {
		return out, fmt.Errorf("exited %d (accepted %s)%s%s", res.ExitCode, showValue(want["returns"]), cutHint(res), stderrHint(res.Stderr))
	}
	if want["unchangedReturns"] != nil {
		out.Outputs[changedOutput] = !acceptedCode(want["unchangedReturns"], res.ExitCode)
	}
	return out, nil
}

// Delete has nothing to remove: an exec leaves no object of its own.
func (execProvider) Delete(context.Context, Env, State) error { return nil }

// Reversible reports whether an undo command is given.
func (execProvider) Reversible(want model.Spec) bool { return want["undo"] != nil }

// Compensate runs undo after a run; an exec that did not run needs nothing.
func (x execProvider) Compensate(ctx context.Context, env Env, want model.Spec, ch Change) error {
	if ch.Action != model.ActionRun {
		return nil
	}
	if want["undo"] == nil {
		return fmt.Errorf("exec %s has no undo command: %w", env.Name, ErrIrreversible)
	}
	res, err := x.run(ctx, env, want, "undo")
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("undo exited %d%s", res.ExitCode, stderrHint(res.Stderr))
	}
	return nil
}

// run runs the command in attribute attr (command, argv or a guard) with
// the exec's environment, working directory and timeout.
func (execProvider) run(ctx context.Context, env Env, want model.Spec, attr string) (commandResult, error) {
	argv, ok, err := specCommand(want, attr)
	if err != nil {
		return commandResult{}, err
	}
	if !ok {
		return commandResult{}, configErrorf(attr, "required")
	}
	cwd, _ := want["cwd"].(string)
	dir, err := env.Node.WorkDir(cwd)
	if err != nil {
		return commandResult{}, fmt.Errorf("cwd: %w", err)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return commandResult{}, fmt.Errorf("cwd %s is not a directory", cmp.Or(cwd, "(node root)"))
		}
	}
	var timeout time.Duration
	if s, ok := want["timeout"].(string); ok {
		if timeout, err = time.ParseDuration(s); err != nil {
			return commandResult{}, configErrorf("timeout", "%v", err)
		}
	}
	res, err := runCommand(ctx, command{Argv: argv, Dir: dir, Env: commandEnv(env.Node, want["env"]), Timeout: timeout})
	if err != nil {
		return res, fmt.Errorf("%s: %w", attr, err)
	}
	return res, nil
}

// commandEnv builds a command's clean environment.
func commandEnv(node Node, extra any) []string {
	vars := map[string]string{"PATH": defaultPath}
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME"} {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	vars["CAIRN_NODE"] = node.Name
	if node.Root != "" {
		root, err := node.WorkDir("")
		if err == nil {
			vars["CAIRN_NODE_ROOT"] = root
			vars["HOME"] = root
		}
	}
	if m, ok := extra.(map[string]any); ok {
		for k, v := range m {
			vars[k] = fmt.Sprint(v)
		}
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func acceptedCode(returns any, code int) bool {
	list, ok := returns.([]any)
	if !ok {
		return code == 0
	}
	for _, c := range list {
		if EqualValues(c, int64(code)) {
			return true
		}
	}
	return false
}

// runOutputs are what a command that ran leaves its dependents: its exit
// code and the text of stdout and stderr (head and tail, with a notice of
// the cut middle), and, for a stream that was cut, how many bytes were
// dropped (stdoutCut, stderrCut).
func runOutputs(res commandResult) map[string]any {
	out := map[string]any{
		"exitCode": int64(res.ExitCode),
		"stdout":   outputText(res.Stdout, res.StdoutCut),
		"stderr":   outputText(res.Stderr, res.StderrCut),
	}
	if res.StdoutCut.Dropped > 0 {
		out["stdoutCut"] = res.StdoutCut.Dropped
	}
	if res.StderrCut.Dropped > 0 {
		out["stderrCut"] = res.StderrCut.Dropped
	}
	return out
}

// cutHint says, in an error message, that the command's output was cut.
func cutHint(res commandResult) string {
	var parts []string
	if n := res.StdoutCut.Dropped; n > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes of stdout", n))
	}
	if n := res.StderrCut.Dropped; n > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes of stderr", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (output cut: " + strings.Join(parts, " and ") + " dropped from the middle)"
}

// stderrHint adds the end of stderr to an error message.
func stderrHint(stderr []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(stderr), "\uFFFD"))
	if s == "" {
		return ""
	}
	const max = 512
	if len(s) > max {
		s = s[len(s)-max:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		s = "…" + s
	}
	return ": " + s
}
