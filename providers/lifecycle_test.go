package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestConvergeTestPreAndTestPost(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	tests := []struct {
		name     string
		pre      string
		post     string
		noop     bool
		skip     bool
		ran      bool // the task's command ran
		outcome  model.Outcome
		errPart  string
		reportIn string
	}{
		{"test_pre says done", "test -f ready", "", false, false, false, model.OutcomeUnchanged, "", "test_pre exited 0: already done"},
		{"test_pre says not done", "test -f missing", "", false, false, true, model.OutcomeUpdated, "", "ran"},
		{"test_post passes", "", "test -f out.txt", false, false, true, model.OutcomeUpdated, "", "ran"},
		{"test_post fails", "", "echo broken >&2; exit 4", false, false, true, model.OutcomeFailed, "test_post exited 4: broken", ""},
		{"dry-run without guards runs no test_pre", "touch pre-ran; true", "", true, true, false, model.OutcomeUnchanged, "", "would run"},
		{"noop runs no test_post", "", "touch post-ran; exit 1", true, false, false, model.OutcomeUnchanged, "", "would run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := localNode(t)
			require.NoError(t, os.WriteFile(filepath.Join(node.Root, "ready"), nil, 0o644))
			req := Request{Kind: "exec", Name: "task", Node: node, Spec: model.Spec{"command": "echo ran > out.txt"},
				Noop: tt.noop, SkipGuards: tt.skip}
			if tt.pre != "" {
				req.TestPre = &model.TaskCheck{Cmd: tt.pre}
			}
			if tt.post != "" {
				req.TestPost = &model.TaskCheck{Cmd: tt.post}
			}
			ch, err := r.Converge(ctx, req)
			if tt.errPart != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.errPart)
			} else {
				require.NoError(t, err)
				assert.Contains(t, ch.Report, tt.reportIn)
			}
			assert.Equal(t, tt.outcome, ch.Outcome)
			if tt.skip && tt.pre != "" {
				assert.Contains(t, ch.Changes, model.AttrChange{Path: "test_pre", New: "not run in a dry-run: the task is skipped where it exits 0"})
			}
			_, statErr := os.Stat(filepath.Join(node.Root, "out.txt"))
			assert.Equal(t, tt.ran, statErr == nil, "command ran")
			for _, f := range []string{"pre-ran", "post-ran"} {
				_, err := os.Stat(filepath.Join(node.Root, f))
				assert.True(t, os.IsNotExist(err), "%s must not exist", f)
			}
		})
	}
}

// TestCheckTimeoutStopsTheGroup bounds a check by its own timeout, the
// whole process group with it.
func TestCheckTimeoutStopsTheGroup(t *testing.T) {
	node := localNode(t)
	start := time.Now()
	_, err := localRegistry(t).Converge(context.Background(), Request{Kind: "exec", Name: "task", Node: node,
		Spec:    model.Spec{"command": "true"},
		TestPre: &model.TaskCheck{Cmd: "sleep 30 & sleep 30", Timeout: 1}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test_pre")
	assert.Less(t, time.Since(start), 15*time.Second)
}
