package model

import "encoding/json"

// ApplyParams are the values an apply or dry-run brings for its package's
// references: env ref values (plain strings, winning over the server's
// environment for that execution), secrets (kept sealed, resolved only
// inside activities) and variables (any JSON value, read by expressions
// as .vars.NAME or vars.NAME); and its verbose option, sent to external
// programs.
type ApplyParams struct {
	EnvRefs map[string]string `json:"envRefs,omitempty"`
	Secrets map[string]string `json:"secrets,omitempty"`
	Vars    map[string]any    `json:"vars,omitempty"`
	Verbose bool              `json:"verbose,omitempty"`
}

// Empty reports whether p brings no value.
func (p ApplyParams) Empty() bool {
	return len(p.EnvRefs) == 0 && len(p.Secrets) == 0 && len(p.Vars) == 0 && !p.Verbose
}

// ApplyEnvelope is the body of an apply or dry-run that brings parameters:
// a JSON object with the package under "package" (a JSON document, or a
// string holding YAML or JSON) or an upload's id under "upload", and the
// parameters beside it. Without either (an object of parameters only) the
// package is the stack's URLs.
type ApplyEnvelope struct {
	Package json.RawMessage `json:"package,omitempty"`
	// Upload names an upload of the stack (a package sent in parts) to
	// run instead of a package in the body.
	Upload string `json:"upload,omitempty"`
	ApplyParams
}
