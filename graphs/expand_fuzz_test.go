package graphs

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// FuzzExpand: expanding arbitrary graphs onto arbitrary nodes never panics,
// is deterministic, and a successful expansion always sorts.
func FuzzExpand(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("groups, stages, cross_depends any and all, subsets"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mk := func() (*model.Graph, []model.Node, ExpandOptions) {
			c := &choices{data: data}
			roles := []string{"controller", "compute", "ceph-osd", "*", "master", "/contr/", "/c.*/", "/[/"}
			var nodes []model.Node
			for i := range c.next(5) {
				n := model.Node{ID: fmt.Sprint("n", i)}
				for range c.next(3) {
					n.Roles = append(n.Roles, roles[c.next(3)])
				}
				nodes = append(nodes, n)
			}
			g := &model.Graph{Type: "default"}
			for range c.next(8) {
				tk := c.task()
				if tk.Type == "" {
					tk.Type = "shell"
				}
				tk.Parameters = map[string]any{"cmd": "x"}
				tk.Roles = nil
				for range c.next(3) {
					tk.Roles = append(tk.Roles, roles[c.next(len(roles))])
				}
				if tk.Type == model.TaskGroup {
					tk.Tasks = c.strs()
				}
				for i := range tk.CrossDepends {
					tk.CrossDepends[i].Role = roles[c.next(len(roles))]
				}
				g.Tasks = append(g.Tasks, tk)
			}
			var opts ExpandOptions
			if c.next(3) == 0 {
				opts.Nodes = []string{fmt.Sprint("n", c.next(4))}
			}
			if c.next(3) == 0 {
				opts.Tasks = []string{fuzzIDs[c.next(len(fuzzIDs)-1)]}
			}
			return g, nodes, opts
		}
		g, nodes, opts := mk()
		s1, err1 := Expand(g, nodes, opts)
		g2, nodes2, opts2 := mk()
		s2, err2 := Expand(g2, nodes2, opts2)
		require.Equal(t, err2 == nil, err1 == nil, "errors differ: %v / %v", err1, err2)
		if err1 != nil {
			require.Equal(t, err2.Error(), err1.Error(), "errors differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		require.Equal(t, s2, s1, "expansion not deterministic")
		_, err := Sort(s1)
		require.NoError(t, err, "expanded steps do not sort")
	})
}
