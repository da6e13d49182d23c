package kinds

import (
	"fmt"
	"strings"
)

// WithHooks returns a copy of c in which the named provisioning hooks
// (move_to_bootstrap, erase_node, cobbler_sync) have a command configured.
// A task of a hook type that is not configured fails validation with an
// error naming the setting to set (HookSetting). Unknown names are an
// error. Cost: one clone of the catalogue's maps.
func (c *Catalogue) WithHooks(configured ...string) (*Catalogue, error) {
	out := c.Clone()
	if out.hooks == nil {
		out.hooks = map[string]bool{}
	}
	for _, h := range configured {
		key := strings.ToLower(h)
		if t, ok := c.tasks[key]; !ok || t.hook == "" {
			return nil, fmt.Errorf("unknown provisioning hook %q (want one of %s)", h, strings.Join(Hooks(), ", "))
		}
		out.hooks[key] = true
	}
	return out, nil
}

// WithHooksElsewhere returns a copy of c for checking documents away from
// the server that executes them (cairn validate on a laptop): a task of a
// hook not configured here (WithHooks) passes ValidateAt, and HookWarning
// says what the server must have, since only the server's CAIRN_HOOK_*
// settings decide. The server's own catalogue never sets this, so there
// the same task stays an error. Cost: one clone of the catalogue's maps.
func (c *Catalogue) WithHooksElsewhere() *Catalogue {
	out := c.Clone()
	out.hooksElsewhere = true
	return out
}

// HookWarning is the warning for a task of taskType in a catalogue made by
// WithHooksElsewhere when its provisioning hook has no command configured
// here; "" otherwise (another type, a configured hook, or a catalogue
// that reports the missing command as an error).
func (c *Catalogue) HookWarning(taskType string) string {
	t, ok := c.tasks[strings.ToLower(taskType)]
	if !ok || !c.hooksElsewhere || t.hook == "" || c.hooks[t.hook] {
		return ""
	}
	return fmt.Sprintf("no command is configured here for the provisioning hook %s: the server that executes this graph must set %s, or refuses it", t.hook, HookSetting(t.hook))
}

// hookError is the validation error of a task whose hook has no command
// (none when hooks are configured elsewhere: see HookWarning).
func (c *Catalogue) hookError(t *taskType, root string) []SpecError {
	if t.hook == "" || c.hooks[t.hook] || c.hooksElsewhere {
		return nil
	}
	return []SpecError{{Path: root, Message: fmt.Sprintf("no command is configured for the provisioning hook %s: set %s on the server", t.hook, HookSetting(t.hook))}}
}

// RunsOnControlPlane reports whether a task type runs on the control plane
// once per node it is assigned to (master_shell, the provisioning hooks).
func (c *Catalogue) RunsOnControlPlane(taskType string) bool {
	t, ok := c.tasks[strings.ToLower(taskType)]
	return ok && t.controlPlane
}

// ForNode tells the spec of one copy of such a task which node it runs
// for (master_shell: the command's CAIRN_TASK_NODE; a hook: its node). The
// spec is changed in place; nested values it changes are copied first.
func (c *Catalogue) ForNode(taskType string, spec map[string]any, node string) {
	t, ok := c.tasks[strings.ToLower(taskType)]
	if !ok || t.forNode == nil || spec == nil {
		return
	}
	t.forNode(spec, node)
}
