package model

// SettingsDocument is the body of GET and PUT /v1/clusters/{id}/settings
// and the answer of PATCH: a cluster's settings tree (Fuel's editable
// attributes).
type SettingsDocument struct {
	Settings map[string]any `json:"settings"`
}
