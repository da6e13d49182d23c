package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// hookProvider runs a provisioning hook (Fuel's move_to_bootstrap,
// erase_node and cobbler_sync, which astute carried out through Cobbler and
// the node's agent): the command configured for the hook (CAIRN_HOOK_<NAME>,
// run with sh -c on the control plane), once per node of the task, with
// CAIRN_HOOK (the hook's name) and CAIRN_TASK_NODE (the node) in its
// environment and the task's parameters as JSON on stdin. Output is
// bounded and the process group stopped on timeout, as exec's. A hook
// cannot be undone: it is irreversible. A hook with no command fails; the
// validation of a graph already says which setting is missing.
type hookProvider struct {
	commands map[string]string
}

// NewHook returns the provider of kind hook; commands maps each
// configured hook to its command.
func NewHook(commands map[string]string) Provider {
	c := make(map[string]string, len(commands))
	for k, v := range commands {
		c[strings.ToLower(k)] = v
	}
	return hookProvider{commands: c}
}

func (hookProvider) Kind() string { return kinds.KindHook }

var hookAttrs = map[string]kinds.AttrKind{
	"hook": kinds.Parameter, "node": kinds.Parameter, "parameters": kinds.Parameter, "timeout": kinds.Parameter,
}

func (hookProvider) Attributes() map[string]kinds.AttrKind { return hookAttrs }

// defaultHookTimeout bounds a hook without a timeout.
const defaultHookTimeout = 10 * time.Minute

// Canonicalize checks the hook's name and turns timeout into a duration.
func (hookProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(kinds.KindHook, spec, hookAttrs); err != nil {
		return nil, err
	}
	name, _, err := specString(spec, "hook")
	if err != nil {
		return nil, err
	}
	known := kinds.Hooks()
	if !slices.Contains(known, name) {
		return nil, configErrorf("hook", "unknown provisioning hook %q (want one of %s)", name, strings.Join(known, ", "))
	}
	out := model.Spec{"hook": name, "timeout": defaultHookTimeout.String()}
	if node, ok, err := specString(spec, "node"); err != nil {
		return nil, err
	} else if ok {
		out["node"] = node
	}
	if p := spec["parameters"]; p != nil {
		if _, ok := p.(map[string]any); !ok {
			return nil, configErrorf("parameters", "want an object, got %s", nested.Describe(p))
		}
		out["parameters"] = p
	}
	if v := spec["timeout"]; v != nil {
		d, err := CanonicalDuration(v)
		if err != nil {
			return nil, configErrorf("timeout", "%v", err)
		}
		out["timeout"] = d.String()
	}
	return out, nil
}

// Read finds nothing: a hook runs every time.
func (hookProvider) Read(context.Context, Env, model.Spec) (State, error) { return State{}, nil }

// Plan always runs.
func (hookProvider) Plan(model.Spec, State) model.Action { return model.ActionRun }

// Apply runs the hook's command; a non-zero exit is an error.
func (x hookProvider) Apply(ctx context.Context, env Env, want model.Spec, _ State) (State, error) {
	name := want["hook"].(string)
	cmd, ok := x.commands[name]
	if !ok || strings.TrimSpace(cmd) == "" {
		return State{}, configErrorf("hook", "no command is configured for the provisioning hook %s: set %s on the server", name, kinds.HookSetting(name))
	}
	params, _ := want["parameters"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	stdin, err := json.Marshal(params)
	if err != nil {
		return State{}, fmt.Errorf("parameters: %w", err)
	}
	node, _ := want["node"].(string)
	timeout, _ := time.ParseDuration(want["timeout"].(string))
	extra := map[string]any{"CAIRN_HOOK": name, kinds.NodeEnv: node}
	res, err := runCommand(ctx, command{
		Argv: []string{"/bin/sh", "-c", cmd}, Env: commandEnv(env.Node, extra), Stdin: stdin, Timeout: timeout,
	})
	out := State{Exists: true, Outputs: runOutputs(res)}
	if err != nil {
		return out, fmt.Errorf("hook %s: %w", name, err)
	}
	if res.ExitCode != 0 {
		return out, fmt.Errorf("hook %s for node %s exited %d%s%s", name, node, res.ExitCode, cutHint(res), stderrHint(res.Stderr))
	}
	return out, nil
}

// Delete has nothing to remove.
func (hookProvider) Delete(context.Context, Env, State) error { return nil }

// Reversible: a provisioning hook cannot be undone.
func (hookProvider) Reversible(model.Spec) bool { return false }

// Compensate reports that a hook that ran cannot be undone.
func (hookProvider) Compensate(_ context.Context, env Env, want model.Spec, ch Change) error {
	if ch.Action != model.ActionRun {
		return nil
	}
	return fmt.Errorf("provisioning hook %v: %w", want["hook"], ErrIrreversible)
}
