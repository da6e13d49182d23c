package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestValidateSummaryRefs checks that validate's summary lists every
// reference: envRef/secretRef values and the env/secret template
// functions, each once, sorted.
func TestValidateSummaryRefs(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	const pkg = `kind: File
metadata: {name: site}
spec:
  path: /srv/site.conf
  content: "site={{ env \"SITE\" }} db={{ secret \"DB_PASSWORD\" }} region={{ env \"REGION\" }}"
---
kind: File
metadata: {name: motd}
spec:
  path: /srv/motd
  content: {envRef: {key: MOTD}}
  dirMode: {secretRef: {key: OWNER}}
  mode: "{{ env \"SITE\" }}"
`
	var sum model.PackageSummary
	s.do(http.MethodPost, "/v1/packages/validate", pkg, "Content-Type", "application/yaml").expect(t, http.StatusOK).json(t, &sum)
	require.Equal(t, 2, sum.Resources)
	assert.Equal(t, []string{"MOTD", "REGION", "SITE"}, sum.EnvRefs)
	assert.Equal(t, []string{"DB_PASSWORD", "OWNER"}, sum.SecretRefs)
}
