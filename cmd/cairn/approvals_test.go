package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// approvals set, show and clear work on stacks and clusters alike; an
// apply of a stack requiring two approvals waits, and exec show says how
// many were given of those required, by whom, the author and who may
// approve.
func TestApprovalsSetShowClearAndTheWaitingState(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "admin-t0ken", tokens: map[string]string{"dev": "dev-t0ken", "ann": "ann-t0ken"}})
	stack := s.stack("web")
	cluster := s.cluster(model.Node{ID: "n1", Roles: []string{"controller"}, Mode: model.NodeLocal})
	for _, tt := range []struct{ noun, name, id string }{{"stack", "web", stack}, {"cluster", cluster, cluster}} {
		t.Run(tt.noun, func(t *testing.T) {
			s.run(tt.noun, "approvals", "show", tt.name).expect(t, 1)
			s.run(tt.noun, "approvals", "set", tt.name, "--required", "2").expect(t, 0).has(t, "Required approvers:", "2", "Author may approve:", "false")
			s.run(tt.noun, "approvals", "show", tt.name).expect(t, 0).has(t, "2")
			s.run(tt.noun, "approvals", "set", tt.name, "--required", "11").expect(t, 1).hasErr(t, "required 11")
			s.run(tt.noun, "approvals", "clear", tt.name).expect(t, 0).has(t, tt.id+" requires no approval")
			s.run(tt.noun, "approvals", "show", tt.name).expect(t, 1)
		})
	}

	s.run("stack", "approvals", "set", "web", "--required", "2").expect(t, 0)
	dev, err := client.New(s.url, "dev-t0ken")
	require.NoError(t, err)
	ann, err := client.New(s.url, "ann-t0ken")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pkg := "kind: File\nmetadata: {name: motd}\nspec: {path: " + s.path("motd") + ", content: hi}\n"
	ex, err := dev.Apply(ctx, stack, &client.Document{Data: []byte(pkg), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	require.Equal(t, model.ExecWaiting, ex.Status, "error %q", ex.Error)
	_, err = ann.Approve(ctx, ex.ID, "fine by me")
	require.NoError(t, err)
	out := s.run("exec", "show", ex.ID).expect(t, 0)
	out.has(t, "Approvals:", "1 of 2", "ann at", "fine by me", "Author:", "dev (may not approve)",
		"May approve:", "principals with approver on stack "+stack)
	assert.NotContains(t, out.stdout, "dev-t0ken")
}
