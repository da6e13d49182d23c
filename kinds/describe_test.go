package kinds

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribe(t *testing.T) {
	c := Builtin()
	require.NoError(t, c.Add(Kind{
		Name: "Label", Base: KindHTTP, Wrap: "body", Description: "a label",
		Defaults:   map[string]any{"url": "http://127.0.0.1", "path": "/labels"},
		Schema:     []byte(`{"type": "object", "properties": {"name": {"type": "string", "description": "its name"}, "color": {"enum": ["red", "blue"]}}, "required": ["name"]}`),
		Attributes: map[string]AttrKind{"name": Namevar},
	}))
	attr := func(d Description, name string) Attribute {
		for _, a := range d.Attributes {
			if a.Name == name {
				return a
			}
		}
		t.Fatalf("%s has no attribute %q: %+v", d.Name, name, d.Attributes)
		return Attribute{}
	}
	tests := []struct {
		name     string
		lookup   string
		wantType string
		wantBase string
		check    func(t *testing.T, d Description)
	}{
		{"built-in kind, case-insensitive", "FILE", TypeKind, "", func(t *testing.T, d Description) {
			assert.Equal(t, "path", d.Attributes[0].Name, "namevar first")
			assert.Equal(t, Namevar, d.Attributes[0].Kind)
			assert.Equal(t, ReadOnly, attr(d, "checksum").Kind)
			assert.Equal(t, Parameter, attr(d, "vars").Kind)
			assert.Equal(t, Property, attr(d, "content").Kind)
			assert.Equal(t, []string{TaskUploadFile}, d.TaskTypes)
			assert.NotEmpty(t, d.AutoEdges)
		}},
		{"exec documents its attributes", "exec", TypeKind, "", func(t *testing.T, d Description) {
			assert.Equal(t, "array of integer", attr(d, "returns").Type)
			assert.Equal(t, []any{int64(0)}, attr(d, "returns").Default)
			assert.Equal(t, "number | string", attr(d, "timeout").Type)
			assert.Equal(t, "string | array of string", attr(d, "undo").Type)
			assert.Equal(t, "object of string", attr(d, "env").Type)
			assert.Contains(t, attr(d, "unchangedReturns").Doc, "changed nothing")
			assert.Equal(t, []string{TaskPuppet, TaskShell}, d.TaskTypes)
		}},
		{"task type", "puppet", TypeTaskType, KindExec, func(t *testing.T, d Description) {
			assert.Contains(t, d.Description, "--detailed-exitcodes")
			m := attr(d, "puppet_manifest")
			assert.True(t, m.Required)
			assert.Equal(t, Parameter, m.Kind)
			assert.Equal(t, "string", m.Type)
		}},
		{"derived kind", "label", TypeDerived, KindHTTP, func(t *testing.T, d Description) {
			assert.Equal(t, "body", d.Wrap)
			assert.Equal(t, "/labels", d.Defaults["path"])
			assert.Equal(t, Attribute{Name: "name", Kind: Namevar, Type: "string", Required: true, Doc: "its name"}, d.Attributes[0])
			assert.Equal(t, "one of red, blue", attr(d, "color").Type)
			assert.Equal(t, Property, attr(d, "color").Kind)
		}},
		{"structural", "group", TypeKind, "", func(t *testing.T, d Description) {
			assert.True(t, d.Structural)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := c.Describe(tt.lookup)
			require.True(t, ok)
			assert.Equal(t, tt.wantType, d.Type)
			assert.Equal(t, tt.wantBase, d.Base)
			tt.check(t, d)
		})
	}
	_, ok := c.Describe("nope")
	assert.False(t, ok)
	assert.ErrorContains(t, c.DescribeError("exe"), `did you mean "exec"`)

	all := c.DescribeAll()
	require.Len(t, all, len(c.Names())+len(c.TaskTypes()))
	assert.Equal(t, "Label", all[0].Name, "kinds sorted first, then task types")
	assert.Equal(t, TypeTaskType, all[len(all)-1].Type)
}
