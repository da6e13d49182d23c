package kinds

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostKindsValidate(t *testing.T) {
	c := Builtin()
	tests := []struct {
		name string
		kind string
		spec map[string]any
		want []string // messages; none: valid
	}{
		{"package present", "package", map[string]any{"name": "nginx"}, nil},
		{"package version", "package", map[string]any{"name": "libc6:amd64", "ensure": "1:2.36-9+deb12u4"}, nil},
		{"package latest", "package", map[string]any{"name": "g++", "ensure": "latest"}, nil},
		{"package ensure from an expression", "package", map[string]any{"name": "nginx", "ensure": "{{ .vars.v }}"}, nil},
		{"package bad ensure", "package", map[string]any{"name": "nginx", "ensure": "newest"}, []string{"want present, installed, absent, latest or a Debian or RPM version, got newest"}},
		{"package rpm", "package", map[string]any{"name": "NetworkManager.x86_64", "ensure": "1:1.46.0-1.fc40"}, nil},
		{"package rpm caret version", "package", map[string]any{"name": "perl_Foo", "ensure": "2.0^20240101git1-3"}, nil},
		{"package glob", "package", map[string]any{"name": "nginx*"}, []string{"does not match the pattern"}},
		{"package version attribute", "package", map[string]any{"name": "nginx", "version": "1.0"}, []string{`a version is given as ensure`}},
		{"package bad name", "package", map[string]any{"name": "-o"}, []string{"does not match the pattern"}},
		{"file_line", "file_line", map[string]any{"path": "/etc/hosts", "line": "127.0.0.1 x", "match": "x$", "multiple": true}, nil},
		{"file_line absent by match", "file_line", map[string]any{"path": "/etc/hosts", "ensure": "absent", "match": "x$", "match_for_absence": true}, nil},
		{"file_line without line", "file_line", map[string]any{"path": "/etc/hosts", "match": "x$"}, []string{`"line" is required`}},
		{"file_line string boolean", "file_line", map[string]any{"path": "/etc/hosts", "line": "x", "replace": "false"}, []string{"expected boolean"}},
		{"file_line unknown", "file_line", map[string]any{"path": "/etc/hosts", "line": "x", "encoding": "UTF-8"}, []string{`unknown field "encoding"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := c.ValidateSpec(tt.kind, tt.spec)
			if len(tt.want) == 0 {
				require.Empty(t, errs)
				return
			}
			require.NotEmpty(t, errs)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Message)
			}
			for _, w := range tt.want {
				assert.Contains(t, strings.Join(msgs, "\n"), w)
			}
		})
	}
}

func TestHostKindsDescribe(t *testing.T) {
	c := Builtin()
	d, ok := c.Describe("file_line")
	require.True(t, ok)
	assert.Contains(t, d.Description, "not listable")
	assert.Equal(t, []AutoEdge{{Kind: KindFile, From: "path", Attr: "path", Match: MatchEqual}}, d.AutoEdges)
	names := map[string]AttrKind{}
	for _, a := range d.Attributes {
		names[a.Name] = a.Kind
	}
	for _, a := range []string{"path", "ensure", "line", "match", "match_for_absence", "multiple", "after", "replace", "append_on_no_match"} {
		assert.Contains(t, names, a, "Puppet's attribute %s", a)
	}
	d, ok = c.Describe("Package")
	require.True(t, ok)
	assert.Contains(t, d.Description, "dpkg-query")
	assert.Equal(t, Namevar, d.Attributes[0].Kind)
	assert.Equal(t, "name", d.Attributes[0].Name)
}
