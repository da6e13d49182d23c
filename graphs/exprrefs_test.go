package graphs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
)

func TestParseExpressionRefs(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"dep of a missing resource, with a near name", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
---
kind: exec
metadata: {name: b}
spec:
  command: "echo {{ (dep \"File/b\").checksum }}"
`, []string{`t.yaml:9:12: spec.command: reads dependency "File/b": no such resource in the package; did you mean "file/a"?`}},
		{"every form of reference, in lists and maps", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
---
kind: exec
metadata: {name: b}
spec:
  argv: [echo, "{{ .deps.nosuch.id }}"]
  env: {X: "{{ index .deps \"File/zz\" }}"}
`, []string{
			`t.yaml:9:16: spec.argv[1]: reads dependency "nosuch": no such resource in the package`,
			`t.yaml:10:12: spec.env.X: reads dependency "File/zz": no such resource in the package; did you mean "file/a"?`,
		}},
		{"existing resources, kind in any case, bare name", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
---
kind: exec
metadata: {name: b}
spec:
  command: "echo {{ (dep \"FILE/a\").checksum }} {{ .deps.a.size }}"
`, nil},
		{"cycle through expressions names its members", `
kind: exec
metadata: {name: a}
spec: {command: "echo {{ (dep \"exec/b\").id }}"}
---
kind: exec
metadata: {name: b}
spec: {command: "true"}
dependsOn: [exec/a]
`, []string{`t.yaml:2:1: dependsOn: dependency cycle: exec/a -> exec/b -> exec/a`}},
		{"a file's template is rendered with its vars, not read as a reference", `
kind: file
metadata: {name: a}
spec: {path: /a, template: "{{ .deps.nosuch }}"}
`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(Options{}, Source{Name: "t.yaml", Data: []byte(tt.src)})
			assert.Equal(t, tt.want, parseErrLines(t, err))
		})
	}
}

func TestBuildPackageExpressionEdges(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[string][]string // step → deps
	}{
		{"dep without dependsOn orders the resources", `
kind: exec
metadata: {name: b}
spec: {command: "echo {{ (dep \"File/a\").checksum }}"}
---
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
`, map[string][]string{"exec/b": {"file/a"}, "file/a": nil}},
		{"an edge dependsOn already gives is not repeated", `
kind: file
metadata: {name: a}
spec: {path: /a, content: x}
---
kind: exec
metadata: {name: b}
spec: {command: "echo {{ (dep \"file/a\").checksum }} {{ .deps.a.size }}"}
dependsOn: [File/a]
`, map[string][]string{"exec/b": {"file/a"}, "file/a": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Parse(Options{}, Source{Name: "t.yaml", Data: []byte(tt.src)})
			require.NoError(t, err)
			steps, err := BuildPackage(docs.Package, kinds.Builtin(), nil)
			require.NoError(t, err)
			got := map[string][]string{}
			for _, s := range steps {
				got[s.ID] = s.Deps
			}
			assert.Equal(t, tt.want, got)

			layers, err := Sort(steps)
			require.NoError(t, err)
			require.Len(t, layers, 2)
			assert.Equal(t, "file/a", layers[0][0].ID)
		})
	}
}
