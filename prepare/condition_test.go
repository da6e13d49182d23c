package prepare

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/expr"
)

func TestSpecializeCondition(t *testing.T) {
	history := func(fn, task string) (any, error) {
		switch {
		case task == "ghost":
			return nil, errors.New(`no task "ghost" in the graph`)
		case fn == "changed":
			return task == "" || task == "config", nil
		case task == "":
			return "2026-03-01T11:00:00Z", nil
		}
		return "", nil
	}
	tests := []struct {
		name    string
		cond    string
		want    bool   // the specialized condition evaluated
		wantErr string // from specializing
	}{
		{"bare changed of the own task", `changed`, true, ""},
		{"changed of another task", `changed "config"`, true, ""},
		{"unchanged task", `changed "other"`, false, ""},
		{"negated", `not (changed "other")`, true, ""},
		{"combined with the node", `and (changed "config") (eq .node.name "n1")`, true, ""},
		{"bare identifier argument", `and changed (eq .node.name "n2")`, false, ""},
		{"template form", `{{ if changed "other" }}true{{ else }}false{{ end }}`, false, ""},
		{"lastRun of the own task", `eq lastRun "2026-03-01T11:00:00Z"`, true, ""},
		{"never ran", `eq (lastRun "other") ""`, true, ""},
		{"unknown task", `changed "ghost"`, false, `no task "ghost"`},
		{"piped", `"config" | changed`, false, "cannot take a piped value"},
		{"not a string", `changed .node.name`, false, "takes a task id in quotes"},
		{"too many arguments", `changed "a" "b"`, false, "at most one task id"},
		{"bad syntax", `changed (`, false, "condition:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := specializeCondition(tt.cond, history)
			if tt.wantErr != "" {
				require.Error(t, err, "err = %v, want %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "err = %v, want %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if usesHistory(got) {
				require.NotContains(t, got, "changed ", "specialized condition %q still calls a history function", got)
			}
			ok, err := expr.Condition(got, expr.Context{Node: map[string]any{"name": "n1"}})
			require.NoError(t, err, "specialized condition %q: %v", got, err)
			require.Equal(t, tt.want, ok, "%q specialized to %q = %v, want %v", tt.cond, got, ok, tt.want)
		})
	}
}
