package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// A stack applied with --cluster shows its cluster, applies there again
// without being told, and refuses another cluster naming both.
func TestStackShowsItsCluster(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "cluster-t0ken"})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"web"}})
	other := "other-" + cluster
	_, err := s.client.CreateCluster(s.ctx(), model.ClusterInput{ID: other, Name: "other",
		Nodes: []model.Node{{ID: "n1", Name: "n1", Roles: []string{"web"}}}})
	require.NoError(t, err)
	require.NoError(t, s.locals.Sync(s.ctx()))
	s.stack("web")
	pkg := s.file("site.yaml", "kind: File\nmetadata: {name: motd}\nspec: {path: /motd, content: \"hi\\n\"}\ntarget: {roles: [web]}\n")

	s.run("apply", "--stack", "web", "--cluster", cluster, pkg).expect(t, 0)
	b, err := os.ReadFile(filepath.Join(s.locals.NodeRoot(cluster, "n1"), "motd"))
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(b))
	s.run("stack", "show", "web").expect(t, 0).has(t, "Cluster:", cluster, "n1")
	s.run("stack", "show", "web", "-o", "json").expect(t, 0).has(t, `"clusterId": "`+cluster+`"`)
	s.run("apply", "--stack", "web", pkg).expect(t, 0).has(t, "unchanged")
	s.run("apply", "--stack", "web", "--cluster", other, pkg).expect(t, 1).hasErr(t, "409", `cluster "`+cluster+`"`, `cluster "`+other+`"`)
}
