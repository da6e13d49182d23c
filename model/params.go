package model

import "encoding/json"

// ApplyParams are the values an apply or dry-run brings for its package's
// references: env ref values (plain strings, winning over the server's
// environment for that execution) and secrets (kept sealed, resolved only
// inside activities).
type ApplyParams struct {
	EnvRefs map[string]string `json:"envRefs,omitempty"`
	Secrets map[string]string `json:"secrets,omitempty"`
}

// Empty reports whether p brings no value.
func (p ApplyParams) Empty() bool { return len(p.EnvRefs) == 0 && len(p.Secrets) == 0 }

// ApplyEnvelope is the body of an apply or dry-run that brings parameters:
// a JSON object with the package under "package" (a JSON document, or a
// string holding YAML or JSON) and the parameters beside it.
type ApplyEnvelope struct {
	Package json.RawMessage `json:"package"`
	ApplyParams
}
