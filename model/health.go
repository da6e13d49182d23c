package model

// Health is the answer of GET /healthz and GET /readyz when they pass:
// Status is "ok". A failing readiness probe answers an ErrorBody instead.
type Health struct {
	Status string `json:"status"`
}

// HealthOK is the Status of a passing probe.
const HealthOK = "ok"
