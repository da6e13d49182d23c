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
}
