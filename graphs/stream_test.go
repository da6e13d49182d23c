package graphs

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// groupsPackage is n files in groups of ten: a root and nine files that
// depend on it, as a YAML stream and as a JSON list.
func groupsPackage(n int) (yamlDoc, jsonDoc []byte) {
	var y, j bytes.Buffer
	j.WriteString("[\n")
	for i := range n {
		name := fmt.Sprintf("g%05d-m%d", i/10, i%10)
		root := fmt.Sprintf("g%05d-m0", i/10)
		fmt.Fprintf(&y, "---\nkind: File\nmetadata: {name: %s}\nspec: {path: /g/%s, content: \"x\"}\n", name, name)
		if i > 0 {
			j.WriteString(",\n")
		}
		fmt.Fprintf(&j, `  {"kind": "File", "metadata": {"name": %q}, "spec": {"path": "/g/%s", "content": "x"}`, name, name)
		if i%10 != 0 {
			fmt.Fprintf(&y, "dependsOn: [File/%s]\n", root)
			fmt.Fprintf(&j, `, "dependsOn": ["File/%s"]`, root)
		}
		j.WriteString("}")
	}
	j.WriteString("\n]\n")
	return y.Bytes(), j.Bytes()
}

// The limits on values hold per document: a stream of many small
// documents is read whatever their number, and a document over a limit is
// refused at its own line while the others are still read.
func TestLimitsHoldPerDocument(t *testing.T) {
	yamlDoc, jsonDoc := groupsPackage(2000)
	for _, src := range []Source{{Name: "p.yaml", Data: yamlDoc}, {Name: "p.json", Data: jsonDoc}} {
		t.Run(src.Name, func(t *testing.T) {
			// 2,000 documents of about ten values each: far more than 1,000
			// values in all, far fewer in each.
			docs, err := Parse(Options{MaxNodes: 1000}, src)
			require.NoError(t, err)
			require.Len(t, docs.Package.Resources, 2000)
			require.Len(t, docs.Index, 2000)
		})
	}

	big := "---\nkind: File\nmetadata: {name: big}\nspec: {path: /big, content: x, extra: [" + strings.Repeat("1,", 2000) + "1]}\n"
	stream := "kind: File\nmetadata: {name: a}\nspec: {path: /a, content: x}\n" + big +
		"---\nkind: File\nmetadata: {name: c}\nspec: {path: /c, content: x}\ndependsOn: [File/mising]\n"
	_, err := Parse(Options{MaxNodes: 1000}, Source{Name: "s.yaml", Data: []byte(stream)})
	var errs Errors
	require.ErrorAs(t, err, &errs)
	require.Len(t, errs, 2, "%v", err)
	assert.Equal(t, "s.yaml:4: document has too many lines and list items (2009, limit 1000)", errs[0].Error())
	assert.Equal(t, 1, errs[0].Pos.Doc)
	assert.Equal(t, "s.yaml:12:13: dependsOn[0]: depends on file/mising: no such resource in the package", errs[1].Error())
	assert.Equal(t, 2, errs[1].Pos.Doc)
}

// A source cut from a larger stream (a part of an upload) reports every
// position in the stream's lines and documents.
func TestSourceOffsets(t *testing.T) {
	bad := "kind: File\nmetadata: {name: a}\nspec: {path: /a, contnt: x}\n---\nkind: Fil\nmetadata: {name: b}\n"
	for _, tc := range []struct {
		name string
		src  Source
		want []string
	}{
		{"yaml", Source{Name: "site.yaml", Data: []byte(bad), Line: 101, Doc: 7}, []string{
			"site.yaml:103:18: spec.contnt: unknown field \"contnt\"; did you mean \"content\"?",
			"site.yaml:105:7: kind: unknown kind \"Fil\"; did you mean \"file\"?",
		}},
		{"json list", Source{Name: "site.json", Data: []byte("[\n  {\"kind\": \"File\", \"metadata\": {\"name\": \"a\"},\n   \"spec\": {\"path\": \"/a\", \"contnt\": \"x\"}}\n]"), Line: 41, Doc: 3}, []string{
			"site.json:43:27: spec.contnt: unknown field \"contnt\"; did you mean \"content\"?",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(Options{}, tc.src)
			var errs Errors
			require.ErrorAs(t, err, &errs)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
				assert.GreaterOrEqual(t, e.Pos.Doc, tc.src.Doc, "%s", e)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// A package read in parts (Options.Part), checked whole with CheckIndex
// over the parts' index entries, finds what a parse of the whole finds.
func TestPartsCheckedWholeAsOne(t *testing.T) {
	whole := "kind: File\nmetadata: {name: a}\nspec: {path: /a, content: x}\n" +
		"---\nkind: File\nmetadata: {name: b}\nspec: {path: /b, content: '{{ (dep \"File/c\").checksum }}'}\ndependsOn: [File/a]\n" +
		"---\nkind: File\nmetadata: {name: c}\nspec: {path: /c, content: x}\ndependsOn: [File/b, Directory/gone]\n" +
		"---\nkind: File\nmetadata: {name: a}\nspec: {path: /a2, content: x}\n"
	_, wholeErr := Parse(Options{}, Source{Name: "request", Data: []byte(whole)})
	require.Error(t, wholeErr)

	var index []IndexEntry
	model.SplitYAML([]byte(whole), func(ch model.YAMLChunk) bool {
		docs, err := Parse(Options{Part: true}, Source{Name: "request", Data: ch.Data, Line: ch.Line, Doc: len(index)})
		require.NoError(t, err, "a part alone is valid")
		index = append(index, docs.Index...)
		return true
	})
	require.Len(t, index, 4)
	assert.Equal(t, wholeErr.Error(), CheckIndex(index).Err().Error())
	assert.Contains(t, wholeErr.Error(), "request:16:18: metadata.name: duplicate resource file/a: first defined at request:1:1")
	assert.Contains(t, wholeErr.Error(), "request:5:1: dependsOn: dependency cycle: file/b -> file/c -> file/b")
	assert.Contains(t, wholeErr.Error(), "request:13:21: dependsOn[1]: depends on directory/gone: no such resource in the package")
}

// A resource may come before the kind definition it uses, as when every
// document was read before any was decoded: it waits for the end.
func TestResourceBeforeItsKind(t *testing.T) {
	src := "kind: Team\nmetadata: {name: ops}\nspec: {name: Operations}\n" +
		"---\nkind: File\nmetadata: {name: f}\nspec: {path: /f, content: x}\nassociations: [team/ops]\n" +
		"---\nkind: Kind\nmetadata: {name: Team}\nspec: {base: http, wrap: body, defaults: {url: 'http://x', path: /teams}, schema: {type: object}}\n"
	docs, err := Parse(Options{}, Source{Name: "k.yaml", Data: []byte(src)})
	require.NoError(t, err)
	require.Len(t, docs.Package.Resources, 2)
	assert.Equal(t, "Team", docs.Package.Resources[0].Kind)
	assert.Equal(t, "f", docs.Package.Resources[1].Name, "package order is document order")
	assert.Equal(t, []model.Ref{{Kind: "Team", Name: "ops"}}, docs.Package.Resources[1].Associations, "a reference takes the kind's spelling")
}
