package client

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// withParams wraps doc in an apply envelope carrying p; doc as it is when
// p is empty. A JSON document is nested as JSON, YAML as a string.
func withParams(doc *Document, p model.ApplyParams) (*Document, error) {
	if doc == nil || p.Empty() {
		return doc, nil
	}
	env := model.ApplyEnvelope{ApplyParams: p}
	switch strings.ToLower(doc.Format) {
	case "json":
		if !json.Valid(doc.Data) {
			return nil, fmt.Errorf("package is not valid JSON")
		}
		env.Package = json.RawMessage(doc.Data)
	case "yaml", "yml", "":
		b, err := json.Marshal(string(doc.Data))
		if err != nil {
			return nil, fmt.Errorf("encode package: %w", err)
		}
		env.Package = b
	default:
		return nil, fmt.Errorf("parameters go with a YAML or JSON package, not %s: evaluate it to JSON first", doc.Format)
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode apply envelope: %w", err)
	}
	return &Document{Data: b, Format: "json"}, nil
}
