package kinds

import (
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

// BaseSpec returns the built-in kind that implements kind and the spec that
// kind receives:
//   - a built-in kind: itself and the spec unchanged;
//   - a Fuel task type: its kind and the parameters renamed (see TaskSpec;
//     execution settings such as retries are dropped here);
//   - a derived kind: its Base and a deep copy of its Defaults with the
//     resource's spec placed under Wrap (or merged over the defaults without
//     Wrap). When the kind declares Associations, `links` lists one id
//     expression per association, {{ (dep "Label/x").id }}, resolved from
//     the dependency's outputs at run time; with no associations the list
//     is empty, so removing the last association removes the last link.
func (c *Catalogue) BaseSpec(kind string, spec map[string]any, associations []model.Ref) (string, map[string]any, error) {
	key := strings.ToLower(kind)
	if t, ok := c.tasks[key]; ok {
		out, _ := t.toBase(spec)
		return t.base, out, nil
	}
	e, ok := c.kinds[key]
	if !ok {
		return "", nil, c.unknown(kind)
	}
	if e.kind.Base == "" {
		return e.kind.Name, spec, nil
	}
	out, err := c.derivedSpec(e.kind, spec, associations)
	if err != nil {
		return "", nil, err
	}
	return e.kind.Base, out, nil
}

// TaskSpec maps a Fuel task's parameters onto the kind that runs it and
// returns the execution settings the parameters carried (shell and puppet
// retries and interval become Meta.Retry and Meta.Delay). For a task whose
// type is a kind, it is BaseSpec with no associations and an empty Meta.
//
//	shell:       cmd → command; cwd, timeout, env and exec's guards kept
//	upload_file: data → content, permissions → mode, dir_permissions →
//	             dirMode; path kept; timeout → Meta.Timeout
//	master_shell: as shell, on the control plane (see ForNode)
//	move_to_bootstrap, erase_node, cobbler_sync: kind hook {hook, timeout,
//	             parameters: the rest}
//	puppet:      puppet_manifest, puppet_modules →
//	             command "puppet apply --detailed-exitcodes
//	             --modulepath=<modules> <manifest>", returns [0, 2] and
//	             unchangedReturns [0]: 2 changed, 0 unchanged, 4/6 failed
func (c *Catalogue) TaskSpec(taskType string, params map[string]any) (string, map[string]any, model.Meta, error) {
	if t, ok := c.tasks[strings.ToLower(taskType)]; ok {
		out, meta := t.toBase(params)
		return t.base, out, meta, nil
	}
	base, out, err := c.BaseSpec(taskType, params, nil)
	return base, out, model.Meta{}, err
}

func (c *Catalogue) unknown(kind string) error {
	return fmt.Errorf("unknown kind %q%s", kind, suggest.Mean(c.Suggest(kind)))
}

func (c *Catalogue) derivedSpec(k Kind, spec map[string]any, associations []model.Ref) (map[string]any, error) {
	out := deepCopyMap(k.Defaults)
	if out == nil {
		out = map[string]any{}
	}
	if k.Wrap != "" {
		inner, _ := out[k.Wrap].(map[string]any)
		if inner == nil || expr.IsDynamic(inner) {
			inner = map[string]any{}
		}
		out[k.Wrap] = mergeOver(inner, deepCopyMap(spec))
	} else {
		out = mergeOver(out, deepCopyMap(spec))
	}
	if k.Associations != nil {
		ids := make([]any, 0, len(associations))
		seen := map[string]bool{}
		for _, ref := range associations {
			if seen[ref.Key()] {
				continue
			}
			seen[ref.Key()] = true
			ids = append(ids, expr.DepField(ref.String(), "id"))
		}
		out["links"] = map[string]any{"path": k.Associations.Path, "field": k.Associations.Field, "ids": ids}
	}
	return out, nil
}

// mergeOver lays over on top of base: objects merge key by key, anything
// else (lists, scalars, references) replaces.
func mergeOver(base, over map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok && !expr.IsDynamic(vm) {
			if bm, ok := base[k].(map[string]any); ok && !expr.IsDynamic(bm) {
				base[k] = mergeOver(bm, vm)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// metaFromParams moves Fuel's retries and interval out of the parameters,
// and drops parameters.strategy (the graph reads it as the task's
// strategy).
func metaFromParams(out map[string]any) model.Meta {
	delete(out, "strategy")
	var meta model.Meta
	if n, ok := wholeNumber(out["retries"]); ok {
		meta.Retry = int(n)
	}
	if v, ok := out["interval"]; ok {
		if d, err := ParseTimeout(v); err == nil && !expr.IsDynamic(v) {
			meta.Delay = d.String()
		}
	}
	delete(out, "retries")
	delete(out, "interval")
	return meta
}

func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

func shellToExec(params map[string]any) (map[string]any, model.Meta) {
	out := deepCopyMap(params)
	if out == nil {
		out = map[string]any{}
	}
	meta := metaFromParams(out)
	if cmd, ok := out["cmd"]; ok {
		if _, has := out["command"]; !has {
			out["command"] = cmd
		}
		delete(out, "cmd")
	}
	return out, meta
}

func uploadFileToFile(params map[string]any) (map[string]any, model.Meta) {
	out := deepCopyMap(params)
	if out == nil {
		out = map[string]any{}
	}
	var meta model.Meta
	if data, ok := out["data"]; ok {
		if _, has := out["content"]; !has {
			out["content"] = data
		}
		delete(out, "data")
	}
	for from, to := range map[string]string{"permissions": "mode", "dir_permissions": "dirMode"} {
		if v, ok := out[from]; ok {
			if _, has := out[to]; !has {
				out[to] = v
			}
			delete(out, from)
		}
	}
	if v, ok := out["timeout"]; ok {
		if d, err := ParseTimeout(v); err == nil && !expr.IsDynamic(v) && d > 0 {
			meta.Timeout = d.String()
		}
		delete(out, "timeout")
	}
	return out, meta
}

// Exit codes of `puppet apply --detailed-exitcodes`, a bitmask: 2 is set
// when resources changed, 4 when some failed.
const (
	PuppetNoChanges = 0
	PuppetChanges   = 2
	PuppetFailures  = 4
)

// puppetToExec runs the manifest with `puppet apply --detailed-exitcodes`:
// exit 0 is an unchanged run, 2 a changed one, 4 and 6 (failures) fail.
func puppetToExec(params map[string]any) (map[string]any, model.Meta) {
	in := deepCopyMap(params)
	if in == nil {
		in = map[string]any{}
	}
	meta := metaFromParams(in)
	manifest, modules := in["puppet_manifest"], in["puppet_modules"]
	delete(in, "puppet_manifest")
	delete(in, "puppet_modules")
	out := in // timeout, cwd, env stay
	// --detailed-exitcodes: 0 nothing changed, 2 changes, 4 failures, 6
	// changes and failures; 0 and 2 succeed, and 0 is an unchanged run.
	out["returns"] = []any{int64(PuppetNoChanges), int64(PuppetChanges)}
	out["unchangedReturns"] = []any{int64(PuppetNoChanges)}
	ms, manifestIsString := manifest.(string)
	mods, modulesIsString := modules.(string)
	if manifestIsString && (modules == nil || modulesIsString) {
		cmd := "puppet apply --detailed-exitcodes"
		if modules != nil {
			cmd += " " + shellQuote("--modulepath="+mods)
		}
		out["command"] = cmd + " " + shellQuote(ms)
		return out, meta
	}
	// A reference cannot be spliced into a command line: use argv, whose
	// elements are resolved one by one.
	argv := []any{"puppet", "apply", "--detailed-exitcodes"}
	if modules != nil {
		if modulesIsString {
			argv = append(argv, "--modulepath="+mods)
		} else {
			argv = append(argv, "--modulepath", modules)
		}
	}
	out["argv"] = append(argv, manifest)
	return out, meta
}

// shellQuote quotes s for /bin/sh unless it is made of characters the
// shell takes literally.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
