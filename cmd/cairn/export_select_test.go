package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExportSelectors applies two stacks, then exports by resource id,
// everything, and a resource id inside one stack.
func TestExportSelectors(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	web, db := s.stack("web"), s.stack("db")
	webRoot, dbRoot := s.path("web"), s.path("db")
	require.NoError(t, os.Mkdir(webRoot, 0o755))
	require.NoError(t, os.Mkdir(dbRoot, 0o755))
	s.run("apply", "--stack", web, s.file("web.yaml", sitePackage(webRoot, "hello"))).expect(t, 0)
	dbPkg := "apiVersion: cairn/v1\nkind: Directory\nmetadata: {name: data}\nspec: {path: " + dbRoot + "/data}\n"
	s.run("apply", "--stack", db, s.file("db.yaml", dbPkg)).expect(t, 0)

	tests := []struct {
		name  string
		args  []string
		code  int
		has   []string
		hasnt []string
		err   []string
	}{
		{"resource ids across stacks", []string{"--resource", "file/motd", "--resource", "directory/data", "-o", "table"}, 0,
			[]string{"file", "motd", webRoot + "/site/motd", "directory", "data"}, []string{"site "}, nil},
		{"a resource id drops a dependsOn left out", []string{"--resource", "file/motd"}, 0,
			[]string{"kind: file", "content: hello"}, []string{"dependsOn"}, nil},
		{"everything", []string{"--all", "-o", "table"}, 0, []string{"motd", "site", "data"}, nil, nil},
		{"a resource id in one stack", []string{"--stack", "db", "--resource", "file/motd"}, 1, nil, nil, []string{"404", "file/motd"}},
		{"a label no resource carries", []string{"--label", "production", "-o", "json"}, 0, []string{"[]"}, nil, nil},
		{"all with kinds", []string{"--all", "--kind", "file"}, 1, nil, nil, []string{"give --stack, --label, --resource or --all, or --kind"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.run(append([]string{"export"}, tt.args...)...).expect(t, tt.code).has(t, tt.has...).hasErr(t, tt.err...)
			for _, no := range tt.hasnt {
				require.NotContains(t, r.stdout, no)
			}
		})
	}
	// What --all exported applies as a package.
	out := s.path("everything.yaml")
	s.run("export", "--all", "--file", out).expect(t, 0)
	runCairn(t, "validate", out).expect(t, 0).has(t, "3 resources")
}
