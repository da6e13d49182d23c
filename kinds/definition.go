package kinds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

// DefinitionKind is the `kind` of a document that defines a kind.
const DefinitionKind = "Kind"

// ParseKindDefinition reads a `kind: Kind` document:
//
//	apiVersion: cairn/v1
//	kind: Kind
//	metadata: {name: Label}
//	spec:
//	  base: http
//	  wrap: body
//	  defaults: {url: {envRef: {key: PLATFORM_URL}}, path: /api/v2/labels}
//	  associations: {path: /labels, field: labelID}
//	  schema: {type: object, properties: {name: {type: string}}}
//	  attributes: {name: property}
//
// Every problem is reported, each with its path. The schema is compiled
// when the kind is added to a catalogue.
func ParseKindDefinition(doc map[string]any) (Kind, error) {
	var k Kind
	var errs []error
	fail := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	unknown := func(path string, m map[string]any, known ...string) {
		for _, key := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(known, key) {
				fail(nested.Key(path, key), "unknown field %q%s", key, suggest.Hint(key, known))
			}
		}
	}
	unknown("", doc, "apiVersion", "kind", "metadata", "spec")
	if v, ok := doc["apiVersion"]; ok && v != model.APIVersion {
		fail("apiVersion", "expected %q, got %v", model.APIVersion, display(v))
	}
	if kind, _ := doc["kind"].(string); !strings.EqualFold(kind, DefinitionKind) {
		fail("kind", "expected %q, got %s", DefinitionKind, display(doc["kind"]))
	}
	meta, ok := doc["metadata"].(map[string]any)
	if !ok {
		fail("metadata", "expected an object with a name")
	} else {
		unknown("metadata", meta, "name", "description")
		name, _ := meta["name"].(string)
		if strings.TrimSpace(name) == "" {
			fail("metadata.name", "a kind needs a name")
		}
		k.Name = strings.TrimSpace(name)
		if d, ok := meta["description"].(string); ok {
			k.Description = d
		}
	}
	spec, ok := doc["spec"].(map[string]any)
	if !ok {
		fail("spec", "expected an object with at least base")
		return k, definitionError(k.Name, errs)
	}
	unknown("spec", spec, "base", "wrap", "defaults", "associations", "schema", "attributes", "description", "autoEdges", "verbatim")
	str := func(field string) string {
		v, ok := spec[field]
		if !ok || v == nil {
			return ""
		}
		s, isStr := v.(string)
		if !isStr {
			fail("spec."+field, "expected a string, got %s", nested.Describe(v))
		}
		return s
	}
	k.Base = str("base")
	if k.Base == "" && spec["base"] == nil {
		fail("spec.base", "a derived kind needs a base kind (http, exec, file, directory or external)")
	}
	k.Wrap = str("wrap")
	if d := str("description"); d != "" {
		k.Description = d
	}
	if v, ok := spec["defaults"]; ok && v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			fail("spec.defaults", "expected an object, got %s", nested.Describe(v))
		}
		k.Defaults = jsonCompatible(m).(map[string]any)
	}
	if v, ok := spec["associations"]; ok && v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			fail("spec.associations", "expected an object {path, field}, got %s", nested.Describe(v))
		} else {
			unknown("spec.associations", m, "path", "field")
			p, _ := m["path"].(string)
			f, _ := m["field"].(string)
			if p == "" {
				fail("spec.associations.path", "a string is required")
			}
			if f == "" {
				fail("spec.associations.field", "a string is required")
			}
			k.Associations = &LinkSpec{Path: p, Field: f}
		}
	}
	if v, ok := spec["schema"]; ok && v != nil {
		if _, isMap := v.(map[string]any); !isMap {
			fail("spec.schema", "expected a JSON Schema object, got %s", nested.Describe(v))
		} else if b, err := json.Marshal(jsonCompatible(v)); err != nil {
			fail("spec.schema", "cannot be encoded as JSON: %v", err)
		} else {
			k.Schema = b
		}
	}
	if v, ok := spec["attributes"]; ok && v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			fail("spec.attributes", "expected an object of attribute: kind, got %s", nested.Describe(v))
		}
		k.Attributes = map[string]AttrKind{}
		known := []string{string(Namevar), string(ReadOnly), string(InitOnly), string(Parameter), string(Property)}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			s, _ := m[name].(string)
			if !validAttrKind(AttrKind(s)) {
				fail("spec.attributes."+name, "unknown attribute kind %s (want namevar, read_only, init_only, parameter or property)%s", display(m[name]), suggest.Hint(s, known))
				continue
			}
			k.Attributes[name] = AttrKind(s)
		}
	}
	if v, ok := spec["autoEdges"]; ok && v != nil {
		b, _ := json.Marshal(jsonCompatible(v))
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&k.AutoEdges); err != nil {
			fail("spec.autoEdges", "expected a list of {kind, from, attr, match, direction, notify}: %v", err)
		}
		for i, e := range k.AutoEdges {
			if e.Match != MatchParentPath && e.Match != MatchEqual {
				fail(fmt.Sprintf("spec.autoEdges[%d].match", i), "expected %q or %q, got %q", MatchParentPath, MatchEqual, e.Match)
			}
			if e.Direction != "" && e.Direction != DirectionAfter && e.Direction != DirectionBefore {
				fail(fmt.Sprintf("spec.autoEdges[%d].direction", i), "expected %q or %q, got %q", DirectionAfter, DirectionBefore, e.Direction)
			}
		}
	}
	if v, ok := spec["verbatim"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			fail("spec.verbatim", "expected a list of attribute names, got %s", nested.Describe(v))
		}
		for i, item := range list {
			s, isStr := item.(string)
			if !isStr {
				fail(fmt.Sprintf("spec.verbatim[%d]", i), "expected a string, got %s", nested.Describe(item))
				continue
			}
			k.Verbatim = append(k.Verbatim, s)
		}
	}
	return k, definitionError(k.Name, errs)
}

func definitionError(name string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	label := "kind definition"
	if name != "" {
		label = fmt.Sprintf("kind definition %q", name)
	}
	return fmt.Errorf("%s: %w", label, errors.Join(errs...))
}

// LoadDir reads every *.yaml, *.yml and *.json file of dir (not its
// subdirectories) as kind definitions: YAML files may hold several
// documents, JSON files an object or an array of them. Errors name the
// file and document and are all returned together.
func LoadDir(dir string) ([]Kind, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read kinds directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var kinds []Kind
	var errs []error
	for _, name := range names {
		path := filepath.Join(dir, name)
		docs, err := readDocuments(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		for i, doc := range docs {
			m, ok := doc.(map[string]any)
			if !ok {
				errs = append(errs, fmt.Errorf("%s: document %d: expected a kind definition object, got %s", path, i, nested.Describe(doc)))
				continue
			}
			k, err := ParseKindDefinition(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: document %d: %w", path, i, err))
				continue
			}
			kinds = append(kinds, k)
		}
	}
	return kinds, errors.Join(errs...)
}

func readDocuments(path string) ([]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if list, ok := v.([]any); ok {
			return list, nil
		}
		return []any{v}, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		if v != nil {
			docs = append(docs, jsonCompatible(v))
		}
	}
	return docs, nil
}

// jsonCompatible converts decoded YAML into the JSON data model: maps with
// string keys, []any, int64/float64 (a decoded JSON Schema's json.Number
// too).
func jsonCompatible(v any) any {
	out, _ := nested.MapAnyOrder(v, "", func(_ nested.Path, v any) (any, error) {
		switch x := v.(type) {
		case map[any]any:
			out := make(map[string]any, len(x))
			for k, item := range x {
				out[fmt.Sprint(k)] = item
			}
			return out, nil
		case int:
			return int64(x), nil
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return n, nil
			}
			if f, err := x.Float64(); err == nil {
				return f, nil
			}
			return x.String(), nil
		}
		return v, nil
	})
	return out
}
