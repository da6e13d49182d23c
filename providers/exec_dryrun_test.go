package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// A dry-run (Noop with SkipGuards) runs no guard command: the exec is
// planned to run unless its guard says otherwise, and the plan says so.
// creates, a path check, is still evaluated. Asked to, or outside a
// dry-run, the guards run.
func TestExecDryRunRunsNoGuardUnlessAsked(t *testing.T) {
	ctx := context.Background()
	const guard = "echo guard >> guard.log; true"
	tests := []struct {
		name       string
		spec       model.Spec
		setup      func(root string)
		skip       bool
		noop       bool
		wantAction model.Action
		wantGuards int
		wantNote   string
	}{
		{name: "dry-run: unless not run", spec: model.Spec{"command": "true", "unless": guard}, skip: true, noop: true,
			wantAction: model.ActionRun, wantNote: "would run unless its guard says otherwise (unless not run in a dry-run; ask for guards to run them)"},
		{name: "dry-run: onlyif and unless not run", spec: model.Spec{"command": "true", "unless": "false", "onlyif": guard}, skip: true, noop: true,
			wantAction: model.ActionRun, wantNote: "would run unless its guard says otherwise (unless and onlyif not run in a dry-run; ask for guards to run them)"},
		{name: "dry-run: creates still checked", spec: model.Spec{"command": "true", "creates": "/done", "unless": guard}, skip: true, noop: true,
			setup: func(root string) { require.NoError(t, os.WriteFile(filepath.Join(root, "done"), nil, 0o644)) }, wantAction: model.ActionNoop},
		{name: "dry-run without guards: plain run", spec: model.Spec{"command": "true"}, skip: true, noop: true, wantAction: model.ActionRun},
		{name: "dry-run asked to run guards", spec: model.Spec{"command": "true", "unless": guard}, noop: true, wantAction: model.ActionNoop, wantGuards: 1},
		{name: "apply ignores SkipGuards", spec: model.Spec{"command": "true", "unless": guard}, skip: true, wantAction: model.ActionNoop, wantGuards: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			if tt.setup != nil {
				tt.setup(node.Root)
			}
			ch, err := r.Converge(ctx, Request{Kind: "exec", Name: "job", Node: node, Spec: tt.spec, Noop: tt.noop, SkipGuards: tt.skip})
			require.NoError(t, err)
			assert.Equal(t, tt.wantAction, ch.Action)
			raw, _ := os.ReadFile(filepath.Join(node.Root, "guard.log"))
			assert.Equal(t, tt.wantGuards, len(raw)/len("guard\n"), "guard runs")
			if tt.wantNote == "" {
				assert.Empty(t, ch.Changes)
				return
			}
			assert.Equal(t, []model.AttrChange{{Path: "guard", New: tt.wantNote}}, ch.Changes)
			assert.Equal(t, "exec/job: "+tt.wantNote+" (noop)", ch.Report)
		})
	}
}
