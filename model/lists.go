package model

// The list answers of the HTTP API. Each wraps its items in an object under
// a named member, so that a list can gain members (a page token) without
// breaking its readers. Items are as the server holds them: pointers where
// the store hands out pointers, so answering copies nothing.

// StackList is the answer of GET /v1/stacks.
type StackList struct {
	Stacks []StackRecord `json:"stacks"`
}

// ReleaseList is the answer of GET /v1/releases.
type ReleaseList struct {
	Releases []*Release `json:"releases"`
}

// PluginList is the answer of GET /v1/plugins.
type PluginList struct {
	Plugins []*Plugin `json:"plugins"`
}

// ClusterList is the answer of GET /v1/clusters.
type ClusterList struct {
	Clusters []*Cluster `json:"clusters"`
}

// GraphInfoList is the answer of GET /v1/{releases|clusters|plugins}/{id}/graphs:
// the owner's graphs.
type GraphInfoList struct {
	Graphs []GraphInfo `json:"graphs"`
}

// GraphMetaList is the answer of GET /v1/graphs: every stored graph the
// filter selects.
type GraphMetaList struct {
	Graphs []GraphMeta `json:"graphs"`
}

// ExecutionList is the answer of GET /v1/executions: one page of
// executions, newest first. NextPageToken is "" on the last page; passed
// back as ?pageToken= it gives the next one.
type ExecutionList struct {
	Executions    []Execution `json:"executions"`
	NextPageToken string      `json:"nextPageToken"`
}
