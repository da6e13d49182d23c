package model

// ExportRequest is the body of POST /v1/export: kinds with a selector
// (objects found on the control plane), or stacks' resources: one stack
// (StackID) or every stack (All, or Labels or Resources without StackID),
// narrowed to those carrying one of Labels and those named in Resources
// ("Kind/name").
type ExportRequest struct {
	StackID   string          `json:"stackId,omitempty"`
	Kinds     []string        `json:"kinds,omitempty"`
	Selector  *ExportSelector `json:"selector,omitempty"`
	Labels    []string        `json:"labels,omitempty"`
	Resources []string        `json:"resources,omitempty"`
	All       bool            `json:"all,omitempty"`
}

// ExportSelector picks the objects of the given kinds (providers' list).
type ExportSelector struct {
	Dir       string   `json:"dir,omitempty"`
	Names     []string `json:"names,omitempty"`
	Recursive bool     `json:"recursive,omitempty"`
	// Spec says where kinds that need it list (an http kind's url, path
	// and headers; an external kind's program and config). Its values may
	// be {envRef} and {secretRef} references, resolved from EnvRefs and
	// Secrets for the listing only: exported resources keep them as
	// written.
	Spec Spec `json:"spec,omitempty"`
	// IDs, when given, keep only the objects of these platform ids (an
	// http object's id, an external instance's id), whichever of the
	// kinds has them; an id no object has is an error.
	IDs []string `json:"ids,omitempty"`
	// Labels, when given, keep only the objects linked to one of these
	// labels of the platform, by the platform's label id (for http, the
	// ids the spec's links read).
	Labels []string `json:"labels,omitempty"`
	// EnvRefs and Secrets are the values of Spec's references. They are
	// used for this request only, never stored.
	EnvRefs map[string]string `json:"envRefs,omitempty"`
	Secrets map[string]string `json:"secrets,omitempty"`
}
