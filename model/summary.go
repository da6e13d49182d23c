package model

// PackageSummary describes a valid package (the answer of POST
// /v1/validate): its resources by kind, what each depends on, and the
// environment and secret references it uses.
type PackageSummary struct {
	Resources  int            `json:"resources"`
	Kinds      map[string]int `json:"kinds"`
	Items      []SummaryItem  `json:"items"`
	Graphs     int            `json:"graphs,omitempty"`
	EnvRefs    []string       `json:"envRefs"`
	SecretRefs []string       `json:"secretRefs"`
}

// SummaryItem is one resource of a package summary.
type SummaryItem struct {
	Kind         string   `json:"kind"`
	Name         string   `json:"name"`
	DependsOn    []string `json:"dependsOn,omitempty"`
	Associations []string `json:"associations,omitempty"`
	Notify       []string `json:"notify,omitempty"`
	Subscribe    []string `json:"subscribe,omitempty"`
}
