package kinds

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

// Catalogue is the set of known kinds and Fuel task types. Build it with
// Builtin, then Clone and Add data-described kinds; once shared it is only
// read, so it is safe for concurrent use. Schemas are compiled when a kind
// enters the catalogue, never per validation.
type Catalogue struct {
	kinds map[string]*entry    // lower-cased kind name → entry
	tasks map[string]*taskType // lower-cased task type → mapping
	hooks map[string]bool      // provisioning hooks with a command configured
	// hooksElsewhere: hooks are configured where graphs execute, not here
	// (WithHooksElsewhere).
	hooksElsewhere bool
}

// entry is one kind with its compiled schema.
type entry struct {
	kind      Kind
	validator *validator // nil for a derived kind without a schema of its own
}

// validator is a compiled JSON Schema plus the checks a schema cannot say
// readably (exactly one of command/argv).
type validator struct {
	schema  *jsonschema.Schema
	doc     any // the schema as decoded, to list property names for did-you-mean
	url     string
	rules   func(spec map[string]any, at string) []SpecError
	printer *message.Printer
}

// taskType maps a Fuel task type onto a kind: its own parameter schema and
// a function turning its parameters into the base kind's spec.
type taskType struct {
	name      string
	base      string
	validator *validator
	toBase    func(params map[string]any) (map[string]any, model.Meta)
	// controlPlane: the task runs on the control plane once per node it
	// is assigned to (master_shell, the provisioning hooks); forNode
	// tells each copy's spec which node it is for.
	controlPlane bool
	forNode      func(spec map[string]any, node string)
	// hook names the provisioning hook the type runs, if any: validation
	// fails unless a command is configured for it (WithHooks).
	hook string
}

// SpecError is one problem of a spec. Path is dotted from the root the
// caller names ("spec.mode", "spec.headers.Authorization", "spec.argv[1]").
type SpecError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e SpecError) Error() string { return e.Path + ": " + e.Message }

// Clone returns a copy that Add can extend without touching c.
func (c *Catalogue) Clone() *Catalogue {
	out := &Catalogue{
		kinds: make(map[string]*entry, len(c.kinds)),
		tasks: make(map[string]*taskType, len(c.tasks)),

		hooksElsewhere: c.hooksElsewhere,
	}
	for k, v := range c.kinds {
		out.kinds[k] = v
	}
	for k, v := range c.tasks {
		out.tasks[k] = v
	}
	if c.hooks != nil {
		out.hooks = make(map[string]bool, len(c.hooks))
		for k, v := range c.hooks {
			out.hooks[k] = v
		}
	}
	return out
}

// Add registers a data-described kind. It refuses a name already taken (by
// a kind or a task type, compared case-insensitively), a Base that is not a
// built-in kind, attributes of unknown kinds, a schema that does not
// compile, and defaults the base kind's schema rejects.
func (c *Catalogue) Add(k Kind) error {
	name := strings.TrimSpace(k.Name)
	if name == "" {
		return errors.New("kind has no name")
	}
	key := strings.ToLower(name)
	if old, ok := c.kinds[key]; ok {
		return fmt.Errorf("kind %q is already defined (as %q)", name, old.kind.Name)
	}
	if _, ok := c.tasks[key]; ok {
		return fmt.Errorf("kind %q clashes with the task type of the same name", name)
	}
	if strings.ContainsAny(name, "/ \t\n") {
		return fmt.Errorf("kind name %q may not contain '/' or spaces", name)
	}
	if k.Base == "" {
		return fmt.Errorf("kind %q: base is required (one of %s)", name, strings.Join(c.builtinNames(), ", "))
	}
	base, ok := c.kinds[strings.ToLower(k.Base)]
	if !ok {
		return fmt.Errorf("kind %q: unknown base kind %q%s", name, k.Base, suggest.Mean(c.Suggest(k.Base)))
	}
	if base.kind.Base != "" {
		return fmt.Errorf("kind %q: base %q is itself derived; use its base %q", name, base.kind.Name, base.kind.Base)
	}
	if base.kind.Structural {
		return fmt.Errorf("kind %q: structural kind %q cannot be a base", name, base.kind.Name)
	}
	k.Name = name
	k.Base = base.kind.Name
	for attr, ak := range k.Attributes {
		if !validAttrKind(ak) {
			return fmt.Errorf("kind %q: attribute %q has unknown kind %q (want namevar, read_only, init_only, parameter or property)", name, attr, ak)
		}
	}
	if k.Associations != nil && (k.Associations.Path == "" || k.Associations.Field == "") {
		return fmt.Errorf("kind %q: associations need both path and field", name)
	}
	if k.Associations != nil && base.kind.Name != "http" {
		return fmt.Errorf("kind %q: associations are only supported on http kinds", name)
	}
	e := &entry{kind: k}
	if len(k.Schema) > 0 {
		v, err := compileSchema(key, k.Schema, nil)
		if err != nil {
			return fmt.Errorf("kind %q: %w", name, err)
		}
		e.validator = v
	}
	if err := checkDefaults(k, base); err != nil {
		return fmt.Errorf("kind %q: %w", name, err)
	}
	c.kinds[key] = e
	return nil
}

// checkDefaults validates the defaults of a derived kind against its base
// schema. With Wrap the resource's spec fills one field, so a placeholder
// object stands in for it and the rest must be complete; without Wrap the
// resource supplies the rest, so only unknown or ill-typed fields count.
func checkDefaults(k Kind, base *entry) error {
	if base.validator == nil {
		return nil
	}
	spec := deepCopyMap(k.Defaults)
	if spec == nil {
		spec = map[string]any{}
	}
	if k.Wrap != "" {
		spec[k.Wrap] = map[string]any{}
	}
	if k.Associations != nil {
		spec["links"] = map[string]any{"path": k.Associations.Path, "field": k.Associations.Field, "ids": []any{}}
	}
	var problems []string
	for _, e := range base.validator.validate(spec, "defaults") {
		if k.Wrap == "" && strings.HasPrefix(e.Message, "missing required field") {
			continue
		}
		if k.Wrap != "" && e.Path == "defaults."+k.Wrap && strings.HasPrefix(e.Message, "expected ") {
			problems = append(problems, fmt.Sprintf("wrap: field %q of %s is not an object", k.Wrap, base.kind.Name))
			continue
		}
		problems = append(problems, e.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid defaults for base %q: %s", base.kind.Name, strings.Join(problems, "; "))
	}
	return nil
}

func validAttrKind(k AttrKind) bool {
	switch k {
	case Namevar, ReadOnly, InitOnly, Parameter, Property:
		return true
	}
	return false
}

// AddAll adds kinds in order and returns every error.
func (c *Catalogue) AddAll(ks []Kind) error {
	var errs []error
	for _, k := range ks {
		if err := c.Add(k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Lookup finds a kind by name, case-insensitively ("File" is "file"), or
// the kind a Fuel task type maps to ("shell" → exec, "upload_file" → file,
// "puppet" → exec). The result is a copy; its maps and slices are shared
// and must not be modified.
func (c *Catalogue) Lookup(name string) (*Kind, bool) {
	key := strings.ToLower(name)
	if e, ok := c.kinds[key]; ok {
		k := e.kind
		return &k, true
	}
	if t, ok := c.tasks[key]; ok {
		k := c.kinds[t.base].kind
		return &k, true
	}
	return nil, false
}

// IsTaskType reports whether name is a Fuel task type mapped onto a kind.
func (c *Catalogue) IsTaskType(name string) bool {
	_, ok := c.tasks[strings.ToLower(name)]
	return ok
}

// Names lists the kinds in their catalogue spelling, sorted.
func (c *Catalogue) Names() []string {
	out := make([]string, 0, len(c.kinds))
	for _, e := range c.kinds {
		out = append(out, e.kind.Name)
	}
	sort.Strings(out)
	return out
}

// TaskTypes lists the Fuel task types the catalogue maps onto kinds, sorted.
func (c *Catalogue) TaskTypes() []string {
	out := make([]string, 0, len(c.tasks))
	for _, t := range c.tasks {
		out = append(out, t.name)
	}
	sort.Strings(out)
	return out
}

func (c *Catalogue) builtinNames() []string {
	var out []string
	for _, e := range c.kinds {
		if e.kind.Base == "" && !e.kind.Structural {
			out = append(out, e.kind.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Suggest returns the kind or task type closest to an unknown name, or ""
// when none is close enough to be a likely typo.
func (c *Catalogue) Suggest(name string) string {
	candidates := c.Names()
	candidates = append(candidates, c.TaskTypes()...)
	return suggest.Closest(name, candidates)
}

// AttrKind returns the kind of an attribute of a kind: for a derived kind
// its own declaration, for a task type the attribute of its base kind.
// Undeclared attributes are properties; an unknown kind yields "".
func (c *Catalogue) AttrKind(kind, attr string) AttrKind {
	k, ok := c.Lookup(kind)
	if !ok {
		return ""
	}
	if ak, ok := k.Attributes[attr]; ok {
		return ak
	}
	return Property
}

// compileSchema compiles a kind's JSON Schema. Schemas may not load
// anything: a $ref to another document is an error, so a kind file cannot
// make the validator read files or the network.
func compileSchema(name string, schema []byte, rules func(map[string]any, string) []SpecError) (*validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("schema must be a JSON object")
	}
	u := "https://kinds.cairn.invalid/" + url.PathEscape(name) + ".json"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(refuseLoader{})
	if err := comp.AddResource(u, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := comp.Compile(u)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return &validator{schema: sch, doc: doc, url: u, rules: rules, printer: message.NewPrinter(language.English)}, nil
}

type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("schemas may not refer to other documents (%s)", u)
}

// deepCopyMap copies a JSON-like map so callers never share nested values.
func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return deepCopy(m).(map[string]any)
}

// deepCopy copies a JSON-like value (nested.MapAnyOrder); string lists and
// maps become []any and map[string]any.
func deepCopy(v any) any {
	out, _ := nested.MapAnyOrder(v, "", func(_ nested.Path, v any) (any, error) {
		switch x := v.(type) {
		case []string:
			out := make([]any, len(x))
			for i, item := range x {
				out[i] = item
			}
			return out, nested.SkipChildren
		case map[string]string:
			out := make(map[string]any, len(x))
			for k, item := range x {
				out[k] = item
			}
			return out, nested.SkipChildren
		}
		return v, nil
	})
	return out
}
