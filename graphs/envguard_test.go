package graphs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A document reading one of Cairn's own settings fails validation with
// the line of the value, in a resource's spec and in a task's condition
// and parameters alike.
func TestDocumentsCannotReadCairnSettings(t *testing.T) {
	src := "kind: File\n" +
		"metadata: {name: leak}\n" +
		"spec:\n" +
		"  path: /tmp/leak\n" +
		"  content: {envRef: {key: CAIRN_API_TOKEN}}\n" +
		"  mode: '{{ env \"CAIRN_CODEC_KEY\" }}'\n" +
		"---\n" +
		"kind: Graph\n" +
		"metadata: {type: deploy}\n" +
		"tasks:\n" +
		"- id: t\n" +
		"  type: shell\n" +
		"  roles: ['*']\n" +
		"  condition: 'eq (env \"CAIRN_DATABASE_URL\") \"x\"'\n" +
		"  parameters: {cmd: 'echo {{ env \"cairn_secret_x\" }}'}\n"
	_, err := Parse(Options{}, Source{Name: "p.yaml", Data: []byte(src), Format: FormatYAML})
	require.Error(t, err)
	var errs Errors
	require.True(t, errors.As(err, &errs))
	got := map[string]int{}
	for _, e := range errs {
		assert.Contains(t, e.Message, "Cairn's own settings", e.Path)
		got[e.Path] = e.Pos.Line
	}
	assert.Equal(t, 5, got["spec.content"])
	assert.Contains(t, got, "spec.mode")
	assert.Contains(t, got, "tasks[0].condition")
	assert.Contains(t, got, "tasks[0].parameters.cmd")
	assert.Len(t, errs, 4)
}
