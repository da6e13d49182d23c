package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// The team verbs against a real server: an admin creates a principal and
// a token scoped to one stack (named, resolved to its id), the token's
// holder sees itself in whoami and is refused another stack, the refusal
// is in `cairn audit`, and a revoked token is refused.
func TestTeamCommands(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{token: "adm"})
	web := s.stack("web")
	db := s.stack("db")

	s.run("principal", "create", "ci", "--kind", "service").expect(t, exitOK).has(t, "ci", "service")
	s.run("principal", "list").expect(t, exitOK).has(t, "NAME", "ci")
	s.run("principal", "show", "ci", "-o", "json").expect(t, exitOK).has(t, `"name": "ci"`)
	s.run("principal", "create", "bad name").expect(t, exitFailure).hasErr(t, "name")

	created := s.run("token", "create", "ci", "--role", "deployer", "--stack", "web", "--expires", "720h", "-o", "json").expect(t, exitOK)
	var tok model.TokenCreated
	require.NoError(t, json.Unmarshal([]byte(created.stdout), &tok))
	require.True(t, strings.HasPrefix(tok.Token, "cairn_"), "token %q", tok.Token)
	assert.Equal(t, []string{web}, tok.Record.Roles[0].Stacks, "--stack web is resolved to its id")
	require.NotNil(t, tok.Record.ExpiresAt)

	s.run("token", "create", "ci", "--role", "graph-author", "--cluster", "c1").expect(t, exitOK).
		hasErr(t, "same as running any command")
	s.run("token", "create", "ci", "--role", "root").expect(t, exitFailure).hasErr(t, "root")

	list := s.run("token", "list").expect(t, exitOK).has(t, tok.ID, "ci", "deployer(stacks="+web+")", "graph-author(clusters=c1)")
	assert.NotContains(t, list.stdout, tok.Token, "list never shows a token")

	asCI := func(args ...string) cliResult {
		return runCairn(t, append(args, "--server", s.url, "--token", tok.Token)...)
	}
	asCI("whoami").expect(t, exitOK).has(t, "principal: ci", "deployer(stacks="+web+")")
	asCI("stack", "list").expect(t, exitOK).has(t, "web")
	out := asCI("stack", "list", "-o", "json").expect(t, exitOK)
	assert.NotContains(t, out.stdout, db, "the token lists only its stack")
	asCI("token", "list").expect(t, exitFailure).hasErr(t, "lacks role admin")

	s.run("audit", "--principal", "ci").expect(t, exitOK).has(t, "GET", "/v1/tokens", "403 forbidden")
	var trail model.AuditList
	require.NoError(t, json.Unmarshal([]byte(s.run("audit", "--json", "--limit", "1000").expect(t, exitOK).stdout), &trail))
	var created2 int
	for _, e := range trail.Entries {
		if e.Route == "/v1/tokens" && e.Method == "POST" && e.Status == 201 {
			created2++
		}
	}
	assert.Equal(t, 2, created2, "both token creations are in the trail")

	s.run("token", "revoke", tok.ID).expect(t, exitOK).has(t, "revoked")
	asCI("whoami").expect(t, exitFailure).hasErr(t, "invalid bearer token")
	s.run("principal", "delete", "ci").expect(t, exitOK)
	s.run("principal", "show", "ci").expect(t, exitFailure)
}
