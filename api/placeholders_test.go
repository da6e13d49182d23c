package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlaceholdersThroughTheAPI: an unknown placeholder is refused at
// upload with its line, and a known one without a value refuses the
// execution before anything starts, naming the task and the field.
func TestPlaceholdersThroughTheAPI(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r", "name": "r"}).expect(t, http.StatusCreated)
	s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "c", "name": "c", "releaseId": "r",
		"nodes": []map[string]any{{"id": "n1", "roles": []string{"controller"}}}}).expect(t, http.StatusCreated)

	bad := "- id: a\n  type: shell\n  roles: ['*']\n  parameters: {cmd: 'echo {CLUSTERID}'}\n"
	e := s.do(http.MethodPut, "/v1/releases/r/graphs/default", []byte(bad), "Content-Type", "application/yaml").
		expect(t, http.StatusUnprocessableEntity).errorBody(t)
	require.Len(t, e.Details, 1)
	assert.Equal(t, 4, e.Details[0].Line)
	assert.Equal(t, "[0].parameters.cmd", e.Details[0].Path)
	assert.Contains(t, e.Details[0].Message, "unknown placeholder {CLUSTERID}")
	s.do(http.MethodGet, "/v1/releases/r/graphs/default", nil).expect(t, http.StatusNotFound)

	good := "- id: sync\n  type: shell\n  roles: ['*']\n  parameters: {cmd: 'rsync rsync://{MASTER_IP}/{OPENSTACK_VERSION}/ .'}\n"
	s.do(http.MethodPut, "/v1/releases/r/graphs/default", []byte(good), "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	e = s.do(http.MethodPost, "/v1/clusters/c/executions", map[string]any{}).expect(t, http.StatusUnprocessableEntity).errorBody(t)
	require.NotEmpty(t, e.Details)
	all := ""
	for _, d := range e.Details {
		all += d.Message + "\n"
	}
	assert.Contains(t, all, `task "sync": parameters.cmd: placeholder {MASTER_IP}: cluster "c" has no setting master_ip`)
	assert.Contains(t, all, "{OPENSTACK_VERSION}: the cluster's release has no version")

	// With the values set, the checks pass: the server has no Temporal, so 503.
	s.do(http.MethodPatch, "/v1/clusters/c/settings", map[string]any{"master_ip": "10.20.0.2"}).expect(t, http.StatusOK)
	s.do(http.MethodPut, "/v1/releases/r", map[string]any{"name": "r", "version": "9.0"}).expect(t, http.StatusOK)
	s.do(http.MethodPost, "/v1/clusters/c/executions", map[string]any{}).expect(t, http.StatusServiceUnavailable)
}
