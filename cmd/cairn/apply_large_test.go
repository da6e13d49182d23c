package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// filesYAML is n files under dir, from `from` on: in groups of ten, a root
// and nine files that depend on it.
func filesYAML(dir string, from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		if b.Len() > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "kind: File\nmetadata: {name: f%04d}\nspec: {path: %s/f%04d, content: \"file %d\\n\"}\n", i, dir, i, i)
		if i%10 != 0 {
			fmt.Fprintf(&b, "dependsOn: [File/f%04d]\n", i-i%10)
		}
	}
	return b.String()
}

// A package larger than the server takes in one request goes in parts:
// one file, and a directory of files, apply as one package each; a bad
// document in a later part is named by its file and line.
func TestApplyPackageOverTheBodyLimit(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, bodyLimit: 16 << 10})
	target := s.path("target")
	require.NoError(t, os.Mkdir(target, 0o755))

	t.Run("one file", func(t *testing.T) {
		s.stack("one")
		big := s.file("big.yaml", filesYAML(target, 0, 400))
		info, err := os.Stat(big)
		require.NoError(t, err)
		require.Greater(t, info.Size(), int64(3*16<<10), "the file must need several parts")
		r := s.run("apply", "--stack", "one", big).expect(t, 0)
		require.Regexp(t, regexp.MustCompile(`(?m)^\s+created:\s+400$`), r.stdout)
		require.Equal(t, "file 399\n", readFile(t, filepath.Join(target, "f0399")))
		r = s.run("plan", "--stack", "one", big, "--detailed-exitcode").expect(t, 0)
		r.has(t, "No changes.")
	})

	t.Run("a directory", func(t *testing.T) {
		id := s.stack("dir")
		dir := s.path("site")
		require.NoError(t, os.Mkdir(dir, 0o755))
		for i := range 3 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("part%d.yaml", i)), []byte(filesYAML(target, 1000+200*i, 200)), 0o644))
		}
		r := s.run("apply", "--stack", "dir", "-f", dir+"/").expect(t, 0)
		require.Regexp(t, regexp.MustCompile(`(?m)^\s+created:\s+600$`), r.stdout)
		require.Equal(t, "file 1599\n", readFile(t, filepath.Join(target, "f1599")))
		rec, err := s.client.GetStack(s.ctx(), id)
		require.NoError(t, err)
		require.Len(t, rec.Resources, 600)
	})

	t.Run("a bad document far into a file", func(t *testing.T) {
		s.stack("bad")
		docs := filesYAML(target, 2000, 400)
		lines := strings.Count(docs, "\n")
		bad := s.file("bad.yaml", docs+"---\nkind: File\nmetadata: {name: broken}\nspec: {path: "+target+"/broken, contnt: x}\n")
		r := s.run("apply", "--stack", "bad", bad).expect(t, 1)
		r.hasErr(t, fmt.Sprintf("%s:%d:", bad, lines+4), "spec.contnt", `unknown field "contnt"`)
		_, err := os.Stat(filepath.Join(target, "f2000"))
		require.True(t, os.IsNotExist(err), "nothing applied: %v", err)
	})
}
