package stepdata

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// A before-state within the limit is kept whole; a larger one keeps only
// whether the object existed and its id, with the size left out, and a
// dry-run says so of the change.
func TestEncodeBeforeBoundsTheKeptState(t *testing.T) {
	ch := providers.Change{Action: model.ActionUpdate, Before: providers.State{Exists: true, ID: "/etc/big", Outputs: map[string]any{"content": strings.Repeat("x", 4096)}}}
	raw, unkept, err := EncodeBefore(ch, 1<<20)
	require.NoError(t, err)
	assert.Zero(t, unkept)
	var whole Before
	require.NoError(t, json.Unmarshal(raw, &whole))
	assert.Equal(t, ch.Before, whole.Before)
	assert.Empty(t, PlanNote(ch, 1<<20))

	raw, unkept, err = EncodeBefore(ch, 1024)
	require.NoError(t, err)
	assert.Greater(t, unkept, 4096)
	var cut Before
	require.NoError(t, json.Unmarshal(raw, &cut))
	assert.Equal(t, providers.State{Exists: true, ID: "/etc/big"}, cut.Before)
	assert.Equal(t, unkept, cut.Unkept)
	assert.Contains(t, PlanNote(ch, 1024), "no byte-exact rollback")
	assert.Contains(t, UnkeptError(cut), "restore /etc/big from a backup")

	create := providers.Change{Action: model.ActionCreate, Before: ch.Before}
	assert.Empty(t, PlanNote(create, 1024), "a create has nothing to restore")
	assert.Equal(t, "3.5 KiB", sizeString(3584))
}

// An alias names a dependency by "Kind/name" or bare name; one whose
// target left no outputs is left out.
func TestAliasRecords(t *testing.T) {
	byID := map[string]map[string]any{"http/api@n1": {"id": "obj"}}
	got := AliasRecords(map[string]string{"svc": "Http/api", "bare": "api", "missing": "File/x"}, byID)
	want := map[string]any{"name": "api", "type": "http", "state": map[string]any{"id": "obj"}}
	assert.Equal(t, map[string]any{"svc": want, "bare": want}, got)
	assert.Nil(t, AliasRecords(nil, byID))
}
