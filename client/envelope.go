package client

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// withParams wraps doc in an apply envelope carrying p; doc as it is when
// p is empty. A JSON document is nested as JSON, YAML as a string, an
// upload by its id; with no doc the envelope has no package, which
// applies the stack's URLs.
func withParams(doc *Document, p model.ApplyParams) (*Document, error) {
	if p.Empty() && (doc == nil || doc.Upload == "") {
		return doc, nil
	}
	env := model.ApplyEnvelope{ApplyParams: p}
	if doc != nil && doc.Upload != "" {
		env.Upload = doc.Upload
	} else if doc != nil {
		pkg, err := envelopePackage(doc)
		if err != nil {
			return nil, err
		}
		env.Package = pkg
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode apply envelope: %w", err)
	}
	return &Document{Data: b, Format: "json"}, nil
}

// envelopePackage is doc as an envelope's "package".
func envelopePackage(doc *Document) (json.RawMessage, error) {
	switch strings.ToLower(doc.Format) {
	case "json":
		if !json.Valid(doc.Data) {
			return nil, fmt.Errorf("package is not valid JSON")
		}
		return json.RawMessage(doc.Data), nil
	case "yaml", "yml", "":
		b, err := json.Marshal(string(doc.Data))
		if err != nil {
			return nil, fmt.Errorf("encode package: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("parameters go with a YAML or JSON package, not %s: evaluate it to JSON first", doc.Format)
}
