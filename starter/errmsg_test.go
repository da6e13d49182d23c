package starter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailedStepIsNamedOnce applies failing steps of several kinds: the
// failure list keys each failure by its step, so the message names the
// step nowhere else, and the execution's error names it exactly once. A
// step that failed before changing anything (a command that did not
// complete, a read) is not compensated: nothing rolls back.
func TestFailedStepIsNamedOnce(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	blocker := filepath.Join(root, "blocker")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o644))
	tests := []struct {
		name, step, doc, want string
		status                model.ExecutionStatus
	}{
		{"exec", "exec/smoke", `kind: Exec
metadata: {name: smoke}
spec: {command: "echo broken >&2; exit 3"}`, "run: exited 3", model.ExecFailed},
		{"file", "file/conf", fmt.Sprintf(`kind: File
metadata: {name: conf}
spec: {path: %s/sub/conf, content: "x"}`, blocker), "read: ", model.ExecFailed},
		{"http", "http/ping", `kind: Http
metadata: {name: ping}
spec: {url: "http://127.0.0.1:1", path: /things, body: {name: x}}`, "create: POST", model.ExecRolledBack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := h.stack("named-once-" + tt.name)
			e := h.apply(s.ID, "apiVersion: cairn/v1\n"+tt.doc+"\n", starter.StackRun{})
			require.NotNil(t, e.Report, "status %s error %q", e.Status, e.Error)
			require.Len(t, e.Report.Failures, 1, "report %+v", e.Report)
			f := e.Report.Failures[0]
			t.Logf("failure %s: %q; error %q", f.Step, f.Error, e.Error)
			assert.Equal(t, tt.step, f.Step)
			assert.Zero(t, strings.Count(f.Error, tt.step), "failure message %q repeats its step", f.Error)
			assert.Contains(t, f.Error, tt.want)
			assert.Equal(t, 1, strings.Count(e.Error, tt.step), "execution error %q", e.Error)
			assert.Equal(t, tt.status, e.Status)
		})
	}
}
