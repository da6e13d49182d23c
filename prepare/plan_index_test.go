package prepare

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/planner"
)

// The index encoded entry by entry reads back as the entries it was made
// of: every field, dependencies and any-of members once, strings that need
// escaping, no steps at all.
func TestEncodeIndexReadsBackAsItsEntries(t *testing.T) {
	many := make([]*planner.StoredStep, 300)
	for i := range many {
		many[i] = &planner.StoredStep{Step: model.Step{ID: fmt.Sprintf("task@%d", i), Kind: "shell", Name: "task", Node: fmt.Sprint(i),
			Deps: []string{"deploy_start@master", fmt.Sprintf("prev@%d", i)}}}
	}
	tests := []struct {
		name  string
		steps []*planner.StoredStep
	}{
		{"none", nil},
		{"fields", []*planner.StoredStep{
			{Step: model.Step{ID: "a", Kind: "file", RecordKind: "File", Name: "a", Node: "n1", Delete: true,
				Associations: []model.Ref{{Kind: "user", Name: "u"}}}},
			{Step: model.Step{ID: "b@<n&2>", Kind: "exec", Name: "say \"hi\"\n", Deps: []string{"a"}, AnyOf: [][]string{{"a", "c"}, {"d"}}}},
		}},
		{"many", many},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := encodeIndex(tt.steps)
			require.NoError(t, err)
			var got []IndexEntry
			require.NoError(t, json.Unmarshal(raw, &got))
			want := []IndexEntry{}
			for _, s := range tt.steps {
				want = append(want, IndexEntry{ID: s.ID, Kind: s.Kind, RecordKind: s.RecordKind, Name: s.Name, Node: s.Node,
					Associations: s.Associations, Delete: s.Delete, Deps: planner.Deps(&s.Step)})
			}
			if len(want) == 0 {
				assert.Empty(t, got)
				assert.JSONEq(t, "[]", string(raw))
				return
			}
			assert.Equal(t, want, got)
		})
	}
}
