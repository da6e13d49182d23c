package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// Bounds of an envelope's parameters; the body limit bounds their bytes.
const (
	maxParams        = 256
	maxParamKeyBytes = 256
)

// envelopeParamKeys are the keys of an envelope's parameters
// (model.ApplyParams): an object of these only is an envelope without a
// package, since a package document names a kind.
var envelopeParamKeys = map[string]bool{"envRefs": true, "secrets": true, "vars": true, "verbose": true}

// maxUploadIDBytes bounds an envelope's upload id.
const maxUploadIDBytes = 128

// unwrapEnvelope recognises an apply envelope by content, as pkger does: a
// JSON object with a "package" key, an "upload" key (the id of an upload
// of the stack: a package sent in parts), or parameter keys only (then the
// package is the stack's URLs). It returns the package as a source of its
// own (nil for an upload or the URLs), the upload's id and the parameters
// beside them; any other body is the package itself, with no parameters.
func unwrapEnvelope(src *graphs.Source) (*graphs.Source, string, model.ApplyParams, error) {
	if src == nil || src.Format != graphs.FormatJSON {
		return src, "", model.ApplyParams{}, nil
	}
	trimmed := bytes.TrimSpace(src.Data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return src, "", model.ApplyParams{}, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &keys); err != nil {
		return src, "", model.ApplyParams{}, nil // the parse names the error with its line
	}
	_, hasPackage := keys["package"]
	_, hasUpload := keys["upload"]
	if !hasPackage && !hasUpload && !onlyParamKeys(keys) {
		return src, "", model.ApplyParams{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var env model.ApplyEnvelope
	if err := dec.Decode(&env); err != nil {
		// The decoder's message names the field and the type, never a value.
		return nil, "", model.ApplyParams{}, badRequest("apply envelope: %v (want {\"package\": … or \"upload\": ID, \"envRefs\": {KEY: string}, \"secrets\": {KEY: string}, \"vars\": {NAME: value}, \"verbose\": bool})", err)
	}
	if err := checkParams(env.ApplyParams); err != nil {
		return nil, "", model.ApplyParams{}, err
	}
	switch {
	case hasPackage && hasUpload:
		return nil, "", model.ApplyParams{}, badRequest("apply envelope: give either \"package\" or \"upload\", not both")
	case hasUpload:
		if env.Upload == "" || len(env.Upload) > maxUploadIDBytes {
			return nil, "", model.ApplyParams{}, badRequest("apply envelope: \"upload\" must be an upload's id (POST /v1/stacks/{id}/uploads)")
		}
		return nil, env.Upload, env.ApplyParams, nil
	case !hasPackage:
		return nil, "", env.ApplyParams, nil
	}
	pkg, err := envelopePackage(env.Package)
	if err != nil {
		return nil, "", model.ApplyParams{}, err
	}
	return pkg, "", env.ApplyParams, nil
}

// onlyParamKeys reports whether keys are some parameters' and nothing else.
func onlyParamKeys(keys map[string]json.RawMessage) bool {
	for k := range keys {
		if !envelopeParamKeys[k] {
			return false
		}
	}
	return len(keys) > 0
}

// envelopePackage is the envelope's package: a JSON document (object or
// array), or a string holding YAML or JSON.
func envelopePackage(raw json.RawMessage) (*graphs.Source, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest("apply envelope: \"package\" is empty: send the package as a JSON document or a string")
	}
	switch raw[0] {
	case '{', '[':
		return &graphs.Source{Name: requestSource, Data: raw, Format: graphs.FormatJSON}, nil
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, badRequest("apply envelope: \"package\": %v", err)
		}
		if len(bytes.TrimSpace([]byte(text))) == 0 {
			return nil, badRequest("apply envelope: \"package\" is empty: send the package as a JSON document or a string")
		}
		// YAML reads JSON as well.
		return &graphs.Source{Name: requestSource, Data: []byte(text), Format: graphs.FormatYAML}, nil
	}
	return nil, badRequest("apply envelope: \"package\" must be a JSON document or a string holding YAML or JSON")
}

// checkParams bounds the parameters and refuses keys templates may not
// read (Cairn's own CAIRN_* variables among them).
func checkParams(p model.ApplyParams) error {
	if n := len(p.EnvRefs) + len(p.Secrets) + len(p.Vars); n > maxParams {
		return badRequest("apply envelope: %d parameters, at most %d", n, maxParams)
	}
	for _, k := range paramKeys(p.EnvRefs) {
		if err := checkParamKey(k); err != nil {
			return badRequest("apply envelope: envRefs: %v", err)
		}
		if err := expr.CheckEnvKey(k); err != nil {
			return badRequest("apply envelope: envRefs: %v", err)
		}
	}
	for _, k := range paramKeys(p.Secrets) {
		if err := checkParamKey(k); err != nil {
			return badRequest("apply envelope: secrets: %v", err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Vars)) {
		if err := checkParamKey(k); err != nil {
			return badRequest("apply envelope: vars: %v", err)
		}
	}
	return nil
}

func checkParamKey(k string) error {
	if k == "" {
		return fmt.Errorf("empty key")
	}
	if len(k) > maxParamKeyBytes {
		return fmt.Errorf("key of %d bytes, at most %d", len(k), maxParamKeyBytes)
	}
	return nil
}

func paramKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
