package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

func TestToYAML(t *testing.T) {
	type item struct {
		Name  string         `json:"name"`
		Flag  string         `json:"flag"`
		Text  string         `json:"text"`
		Count int            `json:"count"`
		Empty []string       `json:"empty"`
		Map   map[string]any `json:"map"`
	}
	v := item{Name: "b-first", Flag: "true", Text: "line 1\nline 2\n", Count: 3, Empty: []string{}, Map: map[string]any{"z": 1, "a": "0755"}}
	out, err := toYAML(v)
	require.NoError(t, err)
	tests := []struct{ name, want string }{
		{"JSON field order", "name: b-first\nflag: "},
		{"strings that read as other types stay strings", `flag: "true"`},
		{"multi-line strings as literal blocks", "text: |\n  line 1\n  line 2\n"},
		{"empty lists in flow style", "empty: []"},
		{"octal-looking strings quoted", `a: "0755"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, string(out), tt.want, "YAML lacks %q:\n%s", tt.want, out)
		})
	}
	// It reads back as the same value.
	var back item
	err = yaml.Unmarshal(out, &back)
	require.NoError(t, err, "round trip: %v %+v", err, back)
	require.Equal(t, "true", back.Flag, "round trip: %v %+v", err, back)
	require.Equal(t, v.Text, back.Text, "round trip: %v %+v", err, back)
	require.Equal(t, "0755", back.Map["a"], "round trip: %v %+v", err, back)
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{"a \"b\"\n", `"a \"b\"\n"`},
		{float64(3), "3"},
		{true, "true"},
		{[]any{"x", 1.5}, `["x",1.5]`},
		{map[string]any{"k": "v"}, `{"k":"v"}`},
	}
	for _, tt := range tests {
		got := formatValue(tt.in)
		assert.Equal(t, tt.want, got, "formatValue(%#v) = %s, want %s", tt.in, got, tt.want)
	}
}

func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false, palette{}, "ex-1")
	p.status(&model.Execution{Progress: &model.Progress{Total: 4}})
	steps := []model.StepProgress{
		{ID: "file/a", Action: model.ActionCreate, Status: model.StatusRunning},
		{ID: "file/a", Action: model.ActionCreate, Status: model.StatusSucceeded},
		{ID: "file/b", Action: model.ActionNoop, Status: model.StatusSucceeded},
		{ID: "task@n1", Action: model.ActionNoop, Status: model.StatusSucceeded, Changes: []model.AttrChange{{Path: "skipped", New: "not selected"}}},
		{ID: "exec/c", Status: model.StatusWaiting, Error: "exit 1"},
		{ID: "exec/c", Status: model.StatusFailed, Error: "exit 1", Attempts: 2},
		{ID: "file/a", Action: model.ActionCreate, Status: model.StatusRolledBack},
	}
	for _, st := range steps {
		p.step(st)
	}
	want := []string{
		"[======>                 ] 1/4 created file/a",
		"[============>           ] 2/4 unchanged file/b",
		"[==================>     ] 3/4 skipped task@n1 (not selected)",
		"[==================>     ] 3/4 waiting exec/c: exit 1",
		"  decide with: cairn exec decide ex-1 --step exec/c --action retry|skip|rollback|abort",
		"[========================] 4/4 failed exec/c after 2 attempts: exit 1",
		"[========================] 4/4 rolled back file/a",
	}
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "progress lines:\n%s\nwant:\n%s", buf.String(), strings.Join(want, "\n"))
}

func TestPayloadDetailNames(t *testing.T) {
	p := &payload{parts: []payloadPart{
		{file: "a.yaml", firstLine: 2, lines: 4, verbatim: true},
		{file: "b.jsonnet", firstLine: 7, lines: 10},
		{file: "c.yaml", firstLine: 18, lines: 3, verbatim: true},
	}}
	tests := []struct {
		in   model.ErrorDetail
		want model.ErrorDetail
	}{
		{model.ErrorDetail{Document: "request", Line: 3, Column: 5, Message: "m"}, model.ErrorDetail{Document: "a.yaml", Line: 2, Column: 5, Message: "m"}},
		{model.ErrorDetail{Document: "request", Index: 2, Line: 9, Column: 1, Path: "spec"}, model.ErrorDetail{Document: "b.jsonnet", Path: "spec"}},
		{model.ErrorDetail{Document: "request", Line: 20, Column: 2}, model.ErrorDetail{Document: "c.yaml", Line: 3, Column: 2}},
		{model.ErrorDetail{Document: "https://example.com/x.yaml", Line: 3}, model.ErrorDetail{Document: "https://example.com/x.yaml", Line: 3}},
	}
	for _, tt := range tests {
		got := p.detailNames(tt.in)
		assert.Equal(t, tt.want, got, "detailNames(%+v) = %+v, want %+v", tt.in, got, tt.want)
	}
}

// TestProgressLineUnknown: a step whose outcome is unknown says so, with
// the decisions it takes.
func TestProgressLineUnknown(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, false, palette{}, "ex-1")
	p.status(&model.Execution{Progress: &model.Progress{Total: 2}})
	p.step(model.StepProgress{ID: "exec/migrate", Action: model.ActionRun, Status: model.StatusUnknown, Error: model.UnknownMessage})
	want := "[                        ] 0/2 unknown exec/migrate: the command may or may not have run\n" +
		"  decide with: cairn exec decide ex-1 --step exec/migrate --action retry|skip|rollback|abort (retry runs it again, skip takes it as done)"
	assert.Equal(t, want, strings.TrimSpace(buf.String()))
	assert.True(t, p.waiting["exec/migrate"], "an unknown step waits for a decision")
}
