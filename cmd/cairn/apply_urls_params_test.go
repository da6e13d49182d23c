package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// applyBodies keeps the bodies of the apply and dry-run requests an API
// handler receives.
type applyBodies struct {
	mu     sync.Mutex
	bodies []string
}

func (b *applyBodies) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/apply") || strings.HasSuffix(r.URL.Path, "/dry-run")) {
			raw, _ := io.ReadAll(r.Body)
			b.mu.Lock()
			b.bodies = append(b.bodies, string(raw))
			b.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		next.ServeHTTP(w, r)
	})
}

func (b *applyBodies) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.bodies) == 0 {
		return ""
	}
	return b.bodies[len(b.bodies)-1]
}

// Apply and plan without files apply the stack's URLs with the parameters
// of --env, --secret, --var and -v: the envelope carries them without a
// package.
func TestApplyStackURLsWithParameters(t *testing.T) {
	var seen applyBodies
	s := newAPIServer(t, apiServerOptions{temporal: true, sealKey: bytes.Repeat([]byte{7}, 32), front: seen.front})
	root := s.path("target")
	pkgs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "kind: File\nmetadata: {name: site}\nspec:\n  path: %s/site.txt\n  content: '{{ env \"SITE\" }}|{{ secret \"DB_PASSWORD\" }}|{{ .vars.region }}'\n", root)
	}))
	t.Cleanup(pkgs.Close)
	require.NoError(t, os.Mkdir(root, 0o755))
	s.run("stack", "create", "urls", "--url", pkgs.URL+"/site.yaml").expect(t, 0)

	s.run("plan", "--stack", "urls", "--env", "SITE=prod", "--secret", "DB_PASSWORD=pw", "--var", "region=eu").expect(t, 0)
	var env model.ApplyEnvelope
	require.NoError(t, json.Unmarshal([]byte(seen.last()), &env))
	assert.Nil(t, env.Package, "no package: the stack's URLs")
	assert.Equal(t, map[string]any{"region": "eu"}, env.Vars)

	s.run("apply", "--stack", "urls", "--env", "SITE=prod", "--secret", "DB_PASSWORD=pw", "--var", "region=eu", "-v").expect(t, 0).
		has(t, "created file/site")
	assert.Equal(t, "prod|pw|eu", readFile(t, root+"/site.txt"))
	assert.JSONEq(t, `{"envRefs": {"SITE": "prod"}, "secrets": {"DB_PASSWORD": "pw"}, "vars": {"region": "eu"}, "verbose": true}`, seen.last())

	// The stack keeps the secret given before.
	s.run("apply", "--stack", "urls", "-v", "--env", "SITE=test", "--var", "region=us").expect(t, 0).has(t, "updated file/site")
	assert.Equal(t, "test|pw|us", readFile(t, root+"/site.txt"))
	// -v alone is an envelope of its own; without the env ref and the
	// variable the step fails by name.
	s.run("apply", "--stack", "urls", "-v").expect(t, 1).has(t, "failed file/site")
	assert.JSONEq(t, `{"verbose": true}`, seen.last())
}
