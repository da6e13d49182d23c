package kinds

import (
	"embed"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// Built-in kind names.
const (
	KindFile      = "file"
	KindDirectory = "directory"
	KindExec      = "exec"
	KindHTTP      = "http"
	KindExternal  = "external"
	KindGroup     = model.TaskGroup
	KindStage     = model.TaskStage
	KindSkipped   = model.TaskSkipped
)

// Fuel task types mapped onto built-in kinds.
const (
	TaskShell      = "shell"
	TaskUploadFile = "upload_file"
	TaskPuppet     = "puppet"
)

// AutoEdge matches.
const (
	MatchParentPath = "parent-path"
	MatchEqual      = "equal"
)

// builtin compiles the built-in kinds once per process: the result is
// never modified (Builtin hands out clones), so sharing it is safe.
var builtin = sync.OnceValues(buildBuiltin)

// Builtin returns a new catalogue of the built-in kinds (file, directory,
// exec, http, external, sync, copy_files, reboot, hook, group, stage,
// skipped) and the Fuel task types mapped onto them (shell, upload_file,
// puppet, master_shell, move_to_bootstrap, erase_node, cobbler_sync). No
// provisioning hook is configured in it: see WithHooks.
func Builtin() *Catalogue {
	c, err := builtin()
	if err != nil {
		// The schemas are part of the program; a broken one is a bug.
		panic(fmt.Sprintf("kinds: built-in catalogue: %v", err))
	}
	return c.Clone()
}

func buildBuiltin() (*Catalogue, error) {
	c := &Catalogue{kinds: map[string]*entry{}, tasks: map[string]*taskType{}}
	parentDir := AutoEdge{Kind: KindDirectory, From: "path", Attr: "path", Match: MatchParentPath}
	defs := []kindDef{
		{Kind{
			Name:        KindFile,
			Description: "a file: content, base64 content or a template rendered with vars; mode; present or absent",
			Attributes: map[string]AttrKind{
				"path": Namevar, "content": Property, "contentBase64": Property, "template": Property,
				"vars": Parameter, "mode": Property, "ensure": Property, "checksum": ReadOnly, "size": ReadOnly,
				"dirMode": Parameter,
			},
			AutoEdges: []AutoEdge{parentDir},
			TaskTypes: []string{TaskUploadFile},
			Verbatim:  []string{"template"},
		}, "file.json", fileRules},
		{Kind{
			Name:        KindDirectory,
			Description: "a directory: mode; present or absent",
			Attributes:  map[string]AttrKind{"path": Namevar, "mode": Property, "ensure": Property},
			AutoEdges:   []AutoEdge{parentDir},
		}, "directory.json", nil},
		{Kind{
			Name:        KindExec,
			Description: "a command (sh -c) or argv, guarded by creates/unless/onlyif, with an optional undo",
			Attributes: map[string]AttrKind{
				"command": Parameter, "argv": Parameter, "env": Parameter, "cwd": Parameter, "timeout": Parameter,
				"creates": Parameter, "unless": Parameter, "onlyif": Parameter, "undo": Parameter, "returns": Parameter, "unchangedReturns": Parameter,
				"refresh": Parameter, "refreshOnly": Parameter,
			},
			Refresh: "runs its refresh command, or its command when it has none and did not run already; " +
				"guards (creates, unless, onlyif) still decide; refreshOnly: true runs only when refreshed",
			AutoEdges: []AutoEdge{
				{Kind: KindDirectory, From: "cwd", Attr: "path", Match: MatchEqual},
				{Kind: KindDirectory, From: "cwd", Attr: "path", Match: MatchParentPath},
			},
			TaskTypes: []string{TaskShell, TaskPuppet},
		}, "exec.json", execRules},
		{Kind{
			Name:        KindHTTP,
			Description: "an object in a REST API: created in path, read/updated/deleted by id",
			Attributes: map[string]AttrKind{
				"body": Property, "links": Property,
				"url": Parameter, "path": Parameter, "readPath": Parameter, "updatePath": Parameter, "deletePath": Parameter,
				"headers": Parameter, "updateMethod": Parameter, "expect": Parameter, "listPath": Parameter, "listPointer": Parameter,
				"idPointer": Parameter, "id": Parameter,
			},
		}, "http.json", nil},
		{Kind{
			Name:        KindExternal,
			Description: "a resource implemented by a program speaking JSON on stdin/stdout (the Deployster protocol)",
			Attributes: map[string]AttrKind{
				"program": Parameter, "image": Parameter, "env": Parameter, "timeout": Parameter, "config": Property,
				DepAliasAttr: Parameter,
			},
			Aliases: true,
		}, "external.json", externalRules},
		userKind,
		unixGroupKind,
		serviceKind,
		{Kind{Name: KindGroup, Description: "a Fuel group: orders its member tasks, changes nothing", Structural: true}, "structural.json", nil},
		{Kind{Name: KindStage, Description: "a Fuel stage: an ordering point, changes nothing", Structural: true}, "structural.json", nil},
		{Kind{Name: KindSkipped, Description: "a disabled task: keeps its edges, runs nothing", Structural: true}, "structural.json", nil},
	}
	defs = append(defs, fuelKinds()...)
	defs = append(defs, hostKinds()...)
	for _, d := range defs {
		schema, err := schemaFiles.ReadFile("schemas/" + d.file)
		if err != nil {
			return nil, err
		}
		d.kind.Schema = schema
		v, err := compileSchema(d.kind.Name, schema, d.rules)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.kind.Name, err)
		}
		c.kinds[d.kind.Name] = &entry{kind: d.kind, validator: v}
	}
	tasks := []taskDef{
		{name: TaskShell, base: KindExec, file: "shell.json", rules: shellRules, toBase: shellToExec},
		{name: TaskUploadFile, base: KindFile, file: "upload_file.json", rules: uploadFileRules, toBase: uploadFileToFile},
		{name: TaskPuppet, base: KindExec, file: "puppet.json", rules: timeoutRule, toBase: puppetToExec},
	}
	tasks = append(tasks, fuelTaskTypes()...)
	for _, t := range tasks {
		schema, err := schemaFiles.ReadFile("schemas/" + t.file)
		if err != nil {
			return nil, err
		}
		v, err := compileSchema(t.name, schema, t.rules)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		c.tasks[t.name] = &taskType{name: t.name, base: t.base, validator: v, toBase: t.toBase,
			controlPlane: t.controlPlane, hook: t.hook, forNode: t.forNode}
	}
	return c, nil
}

// kindDef is a built-in kind with its schema file and the rules a schema
// cannot say readably.
type kindDef struct {
	kind  Kind
	file  string
	rules func(map[string]any, string) []SpecError
}

// taskDef is a Fuel task type mapped onto a built-in kind.
type taskDef struct {
	name, base, file string
	rules            func(map[string]any, string) []SpecError
	toBase           func(map[string]any) (map[string]any, model.Meta)
	// controlPlane, hook and forNode: see taskType.
	controlPlane bool
	hook         string
	forNode      func(spec map[string]any, node string)
}

// set reports whether a field is present and not null.
func set(spec map[string]any, field string) bool {
	v, ok := spec[field]
	return ok && v != nil
}

// exactlyOne checks that exactly one (or, with optional, at most one) of
// the fields is set.
func exactlyOne(spec map[string]any, root string, optional bool, fields ...string) []SpecError {
	var present []string
	for _, f := range fields {
		if set(spec, f) {
			present = append(present, f)
		}
	}
	switch {
	case len(present) > 1:
		return []SpecError{{Path: nested.Key(root, present[1]), Message: fmt.Sprintf("set only one of %s (both %q and %q are set)", quotedList(fields), present[0], present[1])}}
	case len(present) == 0 && !optional:
		return []SpecError{{Path: root, Message: fmt.Sprintf("one of %s is required", quotedList(fields))}}
	}
	return nil
}

// quotedList renders fields as "a", "b", "c"; only messages need it.
func quotedList(fields []string) string {
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = strconv.Quote(f)
	}
	return strings.Join(quoted, ", ")
}

func fileRules(spec map[string]any, root string) []SpecError {
	var errs []SpecError
	if spec["ensure"] != "absent" {
		errs = append(errs, exactlyOne(spec, root, true, "content", "contentBase64", "template")...)
	}
	if s, ok := spec["contentBase64"].(string); ok && !expr.IsDynamic(s) {
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			errs = append(errs, SpecError{Path: nested.Key(root, "contentBase64"), Message: "is not valid base64"})
		}
	}
	if set(spec, "vars") && !set(spec, "template") {
		errs = append(errs, SpecError{Path: nested.Key(root, "vars"), Message: `vars are only used with "template"`})
	}
	return errs
}

func execRules(spec map[string]any, root string) []SpecError {
	errs := exactlyOne(spec, root, false, "command", "argv")
	return append(errs, timeoutRule(spec, root)...)
}

func externalRules(spec map[string]any, root string) []SpecError {
	errs := exactlyOne(spec, root, false, "program", "image")
	return append(errs, timeoutRule(spec, root)...)
}

func shellRules(spec map[string]any, root string) []SpecError {
	errs := exactlyOne(spec, root, false, "cmd", "command", "argv")
	return append(errs, timeoutRule(spec, root)...)
}

func uploadFileRules(spec map[string]any, root string) []SpecError {
	errs := exactlyOne(spec, root, true, "mode", "permissions")
	if spec["ensure"] == "absent" {
		return append(errs, timeoutRule(spec, root)...)
	}
	errs = append(errs, exactlyOne(spec, root, true, "data", "content", "contentBase64")...)
	return append(errs, timeoutRule(spec, root)...)
}

func timeoutRule(spec map[string]any, root string) []SpecError {
	v, ok := spec["timeout"]
	if !ok || expr.IsDynamic(v) {
		return nil
	}
	if _, isString := v.(string); !isString {
		return nil // numbers are checked by the schema
	}
	if _, err := ParseTimeout(v); err != nil {
		return []SpecError{{Path: nested.Key(root, "timeout"), Message: err.Error()}}
	}
	return nil
}

// ParseTimeout reads a timeout given as seconds (a number or a numeric
// string) or as a Go duration string ("90s", "1m30s").
func ParseTimeout(v any) (time.Duration, error) {
	var secs float64
	switch x := v.(type) {
	case nil:
		return 0, nil
	case float64:
		secs = x
	case float32:
		secs = float64(x)
	case int:
		secs = float64(x)
	case int64:
		secs = float64(x)
	case string:
		s := strings.TrimSpace(x)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			secs = f
			break
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid timeout %q: want seconds or a duration such as \"90s\"", x)
		}
		if d < 0 {
			return 0, fmt.Errorf("invalid timeout %q: negative", x)
		}
		return d, nil
	default:
		return 0, fmt.Errorf("invalid timeout: want seconds or a duration string, got %T", v)
	}
	if secs < 0 {
		return 0, fmt.Errorf("invalid timeout %v: negative", secs)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
