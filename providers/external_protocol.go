package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The Deployster protocol, as Cairn speaks it. A program (or an image run
// with `docker run -i --rm`) gets one JSON message on stdin and answers on
// stdout:
//
//   - init (no extra arguments): {name, type, version, verbose} →
//     {config_schema?, plugs?, state_action, delete_action?, restore_action?,
//     list_action?}
//   - state (state_action.args): the init message plus config and the
//     aliased dependencies ({alias: {name, type, state}}) →
//     {status: VALID, state} or {status: STALE, staleState?, actions: [...]}
//   - an action (its args; image and entrypoint optional): the state
//     message; any output, success is exit status 0
//   - delete_action and restore_action (Cairn's additions): the state
//     message plus "state", the state to remove or to bring back
//   - list_action (Cairn's addition): the state message (its config
//     says where to look) → {instances: [{name, id?, labels?, config,
//     state?}]}:
//     id is the instance's own id on its platform, config what the state
//     action finds that same instance by. A program that declares no
//     list_action cannot be listed (an older program: the message says so).
//
// Every message in both directions is checked against the JSON Schemas
// below, so a program that misbehaves is named with the field at fault.

// extAction is how to run one step of a program: extra arguments, and
// optionally another image or entrypoint.
type extAction struct {
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Image       string   `json:"image,omitempty"`
	Entrypoint  string   `json:"entrypoint,omitempty"`
	Args        []string `json:"args,omitempty"`
}

// extPlug is a directory a program asks for (Deployster's plugs): Cairn
// mounts PlugsDir/NAME at container_path for an image and names it in
// CAIRN_PLUG_<NAME> for a program (see external_plugs.go); a required
// plug that is not there is refused.
type extPlug struct {
	ContainerPath string `json:"container_path,omitempty"`
	Optional      bool   `json:"optional,omitempty"`
	Writable      bool   `json:"writable,omitempty"`
}

type extInitRequest struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Version string `json:"version"`
	Verbose bool   `json:"verbose"`
}

type extInitResponse struct {
	ConfigSchema  any                `json:"config_schema,omitempty"`
	Plugs         map[string]extPlug `json:"plugs,omitempty"`
	StateAction   extAction          `json:"state_action"`
	DeleteAction  *extAction         `json:"delete_action,omitempty"`
	RestoreAction *extAction         `json:"restore_action,omitempty"`
	ListAction    *extAction         `json:"list_action,omitempty"`
}

type extStateRequest struct {
	extInitRequest
	Config map[string]any `json:"config"`
	// State is the state a delete or restore action acts on.
	State map[string]any `json:"state,omitempty"`
	// Dependencies are the resource's aliased dependencies, each
	// {name, type, state} with the state it was applied to.
	Dependencies map[string]any `json:"dependencies,omitempty"`
}

type extStateResponse struct {
	Status     string         `json:"status"`
	State      map[string]any `json:"state,omitempty"`
	StaleState map[string]any `json:"staleState,omitempty"`
	Actions    []extAction    `json:"actions,omitempty"`
}

type extListResponse struct {
	Instances []extInstance `json:"instances"`
}

type extInstance struct {
	Name string `json:"name"`
	// ID is the instance's id on its platform, when it has one besides
	// its name.
	ID string `json:"id,omitempty"`
	// Labels are the ids of the platform labels the instance carries,
	// LabelNames their names (when the platform tells them apart).
	Labels     []string       `json:"labels,omitempty"`
	LabelNames []string       `json:"labelNames,omitempty"`
	Config     map[string]any `json:"config"`
	State      map[string]any `json:"state,omitempty"`
}

const (
	extStatusValid = "VALID"
	extStatusStale = "STALE"
)

// extSchemaDefs are shared by the message schemas.
const extSchemaDefs = `"$defs": {
    "action": {
      "type": "object",
      "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "image": {"type": "string", "minLength": 1},
        "entrypoint": {"type": "string", "minLength": 1},
        "args": {"type": "array", "items": {"type": "string"}}
      },
      "additionalProperties": false
    },
    "namedAction": {
      "allOf": [{"$ref": "#/$defs/action"}],
      "required": ["name"],
      "properties": {"name": {"type": "string", "minLength": 1}}
    }
  }`

// extSchemas are the JSON Schemas of every protocol message, by name.
var extSchemas = map[string]string{
	"init-request": `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1},
    "type": {"type": "string", "minLength": 1},
    "version": {"type": "string", "minLength": 1},
    "verbose": {"type": "boolean"}
  },
  "required": ["name", "type", "version", "verbose"],
  "additionalProperties": false
}`,
	"init-response": `{
  "type": "object",
  "properties": {
    "config_schema": {"type": ["object", "boolean"]},
    "plugs": {
      "type": "object",
      "additionalProperties": {
        "type": "object",
        "properties": {
          "container_path": {"type": "string"},
          "optional": {"type": "boolean"},
          "writable": {"type": "boolean"}
        }
      }
    },
    "state_action": {"$ref": "#/$defs/action"},
    "delete_action": {"$ref": "#/$defs/action"},
    "restore_action": {"$ref": "#/$defs/action"},
    "list_action": {"$ref": "#/$defs/action"}
  },
  "required": ["state_action"],
  ` + extSchemaDefs + `
}`,
	"state-request": `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1},
    "type": {"type": "string", "minLength": 1},
    "version": {"type": "string", "minLength": 1},
    "verbose": {"type": "boolean"},
    "config": {"type": "object"},
    "state": {"type": "object"},
    "dependencies": {
      "type": "object",
      "additionalProperties": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1},
          "type": {"type": "string", "minLength": 1},
          "state": {"type": "object"}
        },
        "required": ["name", "type", "state"]
      }
    }
  },
  "required": ["name", "type", "version", "verbose", "config"],
  "additionalProperties": false
}`,
	"state-response": `{
  "type": "object",
  "properties": {
    "status": {"enum": ["VALID", "STALE"]},
    "state": {"type": "object"},
    "staleState": {"type": ["object", "null"]},
    "actions": {"type": "array", "items": {"$ref": "#/$defs/namedAction"}}
  },
  "required": ["status"],
  "allOf": [
    {
      "if": {"properties": {"status": {"const": "VALID"}}, "required": ["status"]},
      "then": {"required": ["state"], "properties": {"actions": false, "staleState": false}}
    },
    {
      "if": {"properties": {"status": {"const": "STALE"}}, "required": ["status"]},
      "then": {"required": ["actions"], "properties": {"actions": {"minItems": 1}, "state": false}}
    }
  ],
  ` + extSchemaDefs + `
}`,
	"list-response": `{
  "type": "object",
  "properties": {
    "instances": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1},
          "id": {"type": "string", "minLength": 1},
          "labels": {"type": "array", "items": {"type": "string"}},
          "config": {"type": "object"},
          "state": {"type": "object"}
        },
        "required": ["name", "config"]
      }
    }
  },
  "required": ["instances"]
}`,
}

// extProtocol holds the compiled message schemas.
type extProtocol struct {
	schemas map[string]*jsonschema.Schema
	printer *message.Printer
}

func newExtProtocol() (*extProtocol, error) {
	p := &extProtocol{schemas: map[string]*jsonschema.Schema{}, printer: message.NewPrinter(language.English)}
	for name, src := range extSchemas {
		sch, err := compileJSONSchema("https://protocol.cairn.invalid/external/"+name+".json", []byte(src))
		if err != nil {
			return nil, fmt.Errorf("protocol schema %s: %w", name, err)
		}
		p.schemas[name] = sch
	}
	return p, nil
}

// compileJSONSchema compiles a schema document that may not load anything
// else (a $ref to another document is an error).
func compileJSONSchema(loc string, src []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return compileJSONSchemaDoc(loc, doc)
}

func compileJSONSchemaDoc(loc string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(extNoLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

type extNoLoader struct{}

func (extNoLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("schemas may not refer to other documents (%s)", u)
}

// check validates a decoded message against the named schema and says
// which fields are wrong.
func (p *extProtocol) check(name string, msg any) error {
	sch, ok := p.schemas[name]
	if !ok {
		return fmt.Errorf("no protocol schema %q", name)
	}
	if err := sch.Validate(msg); err != nil {
		what, _ := describeSchemaError(err, nil, p.printer)
		return errors.New(what)
	}
	return nil
}

// decode reads a program's stdout as one JSON value (numbers kept exact),
// checks it against the named schema, and fills out.
func (p *extProtocol) decode(name string, stdout []byte, out any) error {
	doc, err := decodeJSONValue(stdout)
	if err != nil {
		return &extMisbehaviour{msg: fmt.Sprintf("stdout is not one JSON value (%v); stdout: %s", err, extQuote(stdout))}
	}
	if err := p.check(name, doc); err != nil {
		return &extMisbehaviour{msg: fmt.Sprintf("answer breaks the protocol: %v", err)}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// extMisbehaviour is a program answering outside the protocol.
type extMisbehaviour struct{ msg string }

func (e *extMisbehaviour) Error() string { return e.msg }

// decodeJSONValue decodes exactly one JSON value (surrounding whitespace
// allowed) in the form JSON Schema validation expects.
func decodeJSONValue(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty output")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); err == nil {
		return nil, errors.New("more than one JSON value")
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("after the JSON value: %v", err)
	}
	return v, nil
}

// describeSchemaError flattens a validation error into "at /field: what"
// clauses, the innermost causes only, leaving out those excused drops (nil:
// none); false when it dropped them all.
func describeSchemaError(err error, excused func(*jsonschema.ValidationError) bool, p *message.Printer) (string, bool) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error(), true
	}
	leaves := schemaLeaves(ve, excused)
	if len(leaves) == 0 {
		return ve.Error(), excused == nil
	}
	var parts []string
	for _, e := range leaves {
		at := "/" + strings.Join(escapePointer(e.InstanceLocation), "/")
		what := e.ErrorKind.LocalizedString(p)
		if _, ok := e.ErrorKind.(*kind.FalseSchema); ok {
			what = "not allowed here"
		}
		parts = append(parts, fmt.Sprintf("at %s: %s", at, what))
	}
	const maxParts = 5
	if len(parts) > maxParts {
		parts = append(parts[:maxParts], fmt.Sprintf("and %d more", len(parts)-maxParts))
	}
	return strings.Join(parts, "; "), true
}

func escapePointer(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return out
}

// extQuote shows the start of a program's output, bounded, on one line.
func extQuote(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "(empty)"
	}
	return fmt.Sprintf("%q", snippet(b, 200))
}
