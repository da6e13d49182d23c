package kinds

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// Kinds that implement the rest of Fuel's task types.
const (
	KindSync      = "sync"
	KindCopyFiles = "copy_files"
	KindReboot    = "reboot"
	KindHook      = "hook"
)

// Fuel task types mapped onto kinds (sync, copy_files and reboot are kinds
// of the same name).
const (
	TaskMasterShell     = "master_shell"
	TaskMoveToBootstrap = "move_to_bootstrap"
	TaskEraseNode       = "erase_node"
	TaskCobblerSync     = "cobbler_sync"
)

// hookNames are the provisioning hooks, in the order settings are shown.
var hookNames = [...]string{TaskMoveToBootstrap, TaskEraseNode, TaskCobblerSync}

// Hooks returns the names of the provisioning hooks.
func Hooks() []string { return append([]string(nil), hookNames[:]...) }

// HookSetting is the setting that configures a provisioning hook's
// command: CAIRN_HOOK_ERASE_NODE for erase_node.
func HookSetting(hook string) string { return "CAIRN_HOOK_" + strings.ToUpper(hook) }

// NodeEnv is the variable that tells a master_shell command which node
// it runs for.
const NodeEnv = "CAIRN_TASK_NODE"

// fuelKinds are the kinds behind Fuel's sync, copy_files, reboot and
// provisioning hooks.
func fuelKinds() []kindDef {
	return []kindDef{
		{Kind{
			Name:        KindSync,
			Description: "a directory mirrored from src (rsync:// or a directory on the node) into dst; files not in src are removed",
			Attributes:  map[string]AttrKind{"src": Parameter, "dst": Namevar, "timeout": Parameter},
			AutoEdges:   []AutoEdge{{Kind: KindDirectory, From: "dst", Attr: "path", Match: MatchParentPath}},
		}, "sync.json", syncRules},
		{Kind{
			Name:        KindCopyFiles,
			Description: "files read on the control plane (inside CAIRN_FILES_DIR) written on the node with permissions; parent directories created with dir_permissions",
			Attributes:  map[string]AttrKind{"files": Property, "permissions": Property, "dir_permissions": Parameter, "timeout": Parameter},
		}, "copy_files.json", copyFilesRules},
		{Kind{
			Name:        KindReboot,
			Description: "reboot the node (CAIRN_REBOOT_COMMAND) and wait up to timeout for its agent to come back",
			Attributes:  map[string]AttrKind{"timeout": Parameter},
		}, "reboot.json", timeoutRule},
		{Kind{
			Name:        KindHook,
			Description: "a provisioning hook: the command configured for it (CAIRN_HOOK_<NAME>) run on the control plane for one node",
			Attributes:  map[string]AttrKind{"hook": Parameter, "node": Parameter, "parameters": Parameter, "timeout": Parameter},
		}, "hook.json", timeoutRule},
	}
}

// fuelTaskTypes are master_shell and the provisioning hooks: types that run
// on the control plane once per node they are assigned to.
func fuelTaskTypes() []taskDef {
	out := []taskDef{{
		name: TaskMasterShell, base: KindExec, file: "master_shell.json", rules: shellRules,
		toBase: masterShellToExec, controlPlane: true, forNode: setNodeEnv,
	}}
	for _, h := range hookNames {
		out = append(out, taskDef{
			name: h, base: KindHook, file: "provisioning_hook.json", rules: timeoutRule,
			toBase: hookToBase(h), controlPlane: true, hook: h, forNode: setHookNode,
		})
	}
	return out
}

func syncRules(spec map[string]any, root string) []SpecError {
	errs := timeoutRule(spec, root)
	src, ok := spec["src"].(string)
	if !ok || expr.IsDynamic(src) {
		return errs
	}
	scheme, _, isURL := strings.Cut(src, "://")
	at := nested.Key(root, "src")
	switch {
	case !isURL:
		return errs
	case scheme != "rsync":
		return append(errs, SpecError{Path: at, Message: "want an rsync:// URL or a directory on the node, got scheme " + scheme})
	case strings.Contains(src, "{"):
		return errs // Fuel's placeholders ({MASTER_IP}) are filled in later
	}
	u, err := url.Parse(src)
	switch {
	case err != nil:
		errs = append(errs, SpecError{Path: at, Message: "is not a valid URL: " + err.Error()})
	case u.Host == "":
		errs = append(errs, SpecError{Path: at, Message: "rsync:// URL names no host"})
	}
	return errs
}

func copyFilesRules(spec map[string]any, root string) []SpecError {
	errs := timeoutRule(spec, root)
	files, _ := spec["files"].([]any)
	seen := map[string]int{}
	for i, f := range files {
		m, _ := f.(map[string]any)
		src, _ := m["src"].(string)
		dst, _ := m["dst"].(string)
		at := nested.Index(nested.Key(root, "files"), i)
		if src != "" && !expr.IsDynamic(src) && !strings.HasPrefix(src, "/") {
			errs = append(errs, SpecError{Path: at + ".src", Message: "must be an absolute path on the control plane"})
		}
		if dst == "" || expr.IsDynamic(dst) {
			continue
		}
		if first, dup := seen[dst]; dup {
			errs = append(errs, SpecError{Path: at + ".dst", Message: "is also the dst of files[" + strconv.Itoa(first) + "]"})
			continue
		}
		seen[dst] = i
	}
	return errs
}

// masterShellToExec is shell's mapping (parameters.strategy is dropped
// there: the graph reads it as the task's strategy).
func masterShellToExec(params map[string]any) (map[string]any, model.Meta) {
	return shellToExec(params)
}

// setNodeEnv gives a master_shell copy its node in NodeEnv.
func setNodeEnv(spec map[string]any, node string) {
	env, _ := spec["env"].(map[string]any)
	if env == nil || expr.IsDynamic(env) {
		env = map[string]any{}
	} else {
		env = deepCopyMap(env)
	}
	env[NodeEnv] = node
	spec["env"] = env
}

// hookToBase maps a provisioning hook's parameters onto kind hook: the
// timeout stays, everything else is handed to the command.
func hookToBase(hook string) func(map[string]any) (map[string]any, model.Meta) {
	return func(params map[string]any) (map[string]any, model.Meta) {
		rest := deepCopyMap(params)
		if rest == nil {
			rest = map[string]any{}
		}
		out := map[string]any{"hook": hook}
		if v, ok := rest["timeout"]; ok {
			out["timeout"] = v
			delete(rest, "timeout")
		}
		if len(rest) > 0 {
			out["parameters"] = rest
		}
		return out, model.Meta{}
	}
}

func setHookNode(spec map[string]any, node string) { spec["node"] = node }
