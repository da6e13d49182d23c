package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDuplicateKeysAnswerWithWarnings(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r1", "name": "r1"}).expect(t, http.StatusCreated)
	graph := `- id: hello
  type: shell
  parameters: {cmd: echo first, cmd: echo last}
`
	r := s.do(http.MethodPut, "/v1/releases/r1/graphs/default", graph, "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	assert.Equal(t, []string{`299 cairn "request:3:33: duplicate key \"cmd\" (first at line 3): the last value is used, as Fuel's loader did"`}, r.Header.Values("Warning"))

	pkg := `kind: directory
metadata: {name: a}
spec: {path: /a}
spec: {path: /b}
`
	r = s.do(http.MethodPost, "/v1/packages/validate", pkg, "Content-Type", "application/yaml").expect(t, http.StatusOK)
	assert.Len(t, r.Header.Values("Warning"), 1)
	assert.Contains(t, r.Header.Get("Warning"), `duplicate key \"spec\" (first at line 3)`)
}

// A relation to a task the graph does not have is dropped with a warning,
// as Fuel did; a package's dependsOn to a missing resource stays an error.
func TestMissingRelationsAnswerWithWarnings(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	s.do(http.MethodPost, "/v1/releases", map[string]any{"id": "r1", "name": "r1"}).expect(t, http.StatusCreated)
	graph := `- id: hello
  type: shell
  requires: [ghost]
  parameters: {cmd: echo hi}
`
	r := s.do(http.MethodPut, "/v1/releases/r1/graphs/default", graph, "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	assert.Equal(t, []string{`299 cairn "request:3:14: [0].requires[0]: requires \"ghost\": no such task in graph \"default\": the relation is dropped, as Fuel's task-based deployment did"`}, r.Header.Values("Warning"))

	pkg := `kind: directory
metadata: {name: a}
spec: {path: /a}
dependsOn: [directory/nope]
`
	s.do(http.MethodPost, "/v1/packages/validate", pkg, "Content-Type", "application/yaml").expect(t, http.StatusUnprocessableEntity)
}

// The API's validate warns of a user's password written in the package,
// as `cairn validate` does offline.
func TestLiteralPasswordAnswersWithAWarning(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	pkg := "kind: user\nmetadata: {name: deploy}\nspec:\n  password: \"$6$salt$hash\"\n"
	r := s.do(http.MethodPost, "/v1/packages/validate", pkg, "Content-Type", "application/yaml").expect(t, http.StatusOK)
	assert.Equal(t, []string{`299 cairn "request:4:13: spec.password: password is written in the package: give it as a secret ({secretRef: {key: KEY}} or {{ secret \"KEY\" }}); the apply refuses a literal"`}, r.Header.Values("Warning"))

	pkg = "kind: user\nmetadata: {name: deploy}\nspec:\n  password: {secretRef: {key: DEPLOY_HASH}}\n"
	r = s.do(http.MethodPost, "/v1/packages/validate", pkg, "Content-Type", "application/yaml").expect(t, http.StatusOK)
	assert.Empty(t, r.Header.Values("Warning"))
}
