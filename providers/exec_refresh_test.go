package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// linesOf is the lines the test commands appended to file log.
func linesOf(t *testing.T, root, log string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, log))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// A refreshed exec reacts as Puppet's does: refreshOnly runs only when
// refreshed, refresh replaces the command on a refresh, a plain exec that
// runs anyway runs once, and guards still decide.
func TestExecRefresh(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name          string
		spec          model.Spec
		refresh       bool
		wantAction    model.Action
		wantRefreshed bool
		wantRan       []string
	}{
		{"refreshOnly, not refreshed", model.Spec{"command": "echo cmd >> log", "refreshOnly": true}, false,
			model.ActionNoop, false, nil},
		{"refreshOnly, refreshed", model.Spec{"command": "echo cmd >> log", "refreshOnly": true}, true,
			model.ActionRun, true, []string{"cmd"}},
		{"refreshOnly with refresh command", model.Spec{"command": "echo cmd >> log", "refresh": "echo refresh >> log", "refreshOnly": true}, true,
			model.ActionRun, true, []string{"refresh"}},
		{"plain exec refreshed runs once", model.Spec{"command": "echo cmd >> log"}, true,
			model.ActionRun, false, []string{"cmd"}},
		{"plain exec with refresh command runs both", model.Spec{"command": "echo cmd >> log", "refresh": []any{"sh", "-c", "echo refresh >> log"}}, true,
			model.ActionRun, true, []string{"cmd", "refresh"}},
		{"a guard that holds keeps a refresh from running", model.Spec{"command": "echo cmd >> log", "unless": "true", "refreshOnly": true}, true,
			model.ActionNoop, false, nil},
		{"a guard that holds keeps a plain exec's refresh command from running", model.Spec{"command": "echo cmd >> log", "refresh": "echo refresh >> log", "onlyif": "false"}, true,
			model.ActionNoop, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			req := Request{Kind: "exec", Name: "restart", Node: node, Spec: tt.spec, Refresh: tt.refresh}
			noop := req
			noop.Noop = true
			plan, err := r.Converge(ctx, noop)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAction, plan.Action, "plan")
			assert.Equal(t, tt.wantRefreshed, plan.Refreshed, "plan")
			assert.Empty(t, linesOf(t, node.Root, "log"), "a plan runs nothing")

			ch, err := r.Converge(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAction, ch.Action)
			assert.Equal(t, tt.wantRefreshed, ch.Refreshed)
			assert.Equal(t, tt.wantRan, linesOf(t, node.Root, "log"))
			if tt.wantRan != nil {
				assert.Equal(t, model.OutcomeUpdated, ch.Outcome)
				assert.Equal(t, int64(0), ch.After.Outputs["exitCode"])
			} else {
				assert.Equal(t, model.OutcomeUnchanged, ch.Outcome)
			}
		})
	}
}

// A failing refresh fails the step; undo compensates a refresh as it
// does a run.
func TestExecRefreshFailsAndIsUndone(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	req := Request{Kind: "exec", Name: "restart", Node: node, Refresh: true, Spec: model.Spec{
		"command": "true", "refresh": "echo bad >&2; exit 3", "refreshOnly": true,
	}}
	_, err := r.Converge(ctx, req)
	require.ErrorContains(t, err, "refresh: exited 3")

	req.Spec = model.Spec{"command": "echo on > state", "undo": "echo off > state", "refreshOnly": true}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err)
	require.True(t, ch.Refreshed)
	assert.False(t, ch.Irreversible)
	require.NoError(t, r.Compensate(ctx, req, jsonRoundTrip(t, ch)))
	got, err := os.ReadFile(filepath.Join(node.Root, "state"))
	require.NoError(t, err)
	assert.Equal(t, "off\n", string(got))
}

// Kinds without a refresh ignore one: a file is only ordered.
func TestRefreshIgnoredByKindsWithout(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	req := Request{Kind: "file", Name: "f", Node: node, Refresh: true, Spec: model.Spec{"path": "/f", "content": "x"}}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionCreate, ch.Action)
	assert.False(t, ch.Refreshed)
	ch, err = r.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, ch.Action)
	assert.False(t, ch.Refreshed)
}
