package graphs

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// choices reads fuzz bytes as a stream of small decisions.
type choices struct {
	data []byte
	i    int
}

func (c *choices) next(n int) int {
	if n <= 1 || c.i >= len(c.data) {
		return 0
	}
	b := c.data[c.i]
	c.i++
	return int(b) % n
}

var fuzzIDs = []string{"a", "b", "c", "d", "deploy_start", ""}

var fuzzFields = []string{
	"type", "version", "roles", "groups", "tasks", "requires", "required_for", "cross_depends",
	"cross_depended_by", "condition", "fail_on_error", "strategy", "fault_tolerance", "parameters", "meta", "custom", "id",
}

func (c *choices) value(depth int) any {
	switch c.next(9) {
	case 0:
		return nil
	case 1:
		return fmt.Sprint("s", c.next(4))
	case 2:
		return int64(c.next(5))
	case 3:
		return float64(c.next(5)) / 2
	case 4:
		return c.next(2) == 1
	case 5, 6:
		if depth > 3 {
			return "deep"
		}
		m := map[string]any{}
		for range c.next(4) {
			m[fmt.Sprint("k", c.next(4))] = c.value(depth + 1)
		}
		return m
	default:
		if depth > 3 {
			return []any{}
		}
		var l []any
		for range c.next(3) {
			l = append(l, c.value(depth+1))
		}
		return l
	}
}

func (c *choices) strs() []string {
	if c.next(4) == 0 {
		return nil
	}
	out := []string{}
	for range c.next(3) {
		out = append(out, fuzzIDs[c.next(len(fuzzIDs))])
	}
	return out
}

func (c *choices) task() *model.Task {
	t := &model.Task{ID: fuzzIDs[c.next(len(fuzzIDs))]}
	if c.next(3) > 0 {
		t.Type = []string{"shell", "stage", "group", "skipped", "puppet"}[c.next(5)]
	}
	t.Roles, t.Requires, t.RequiredFor, t.Groups = c.strs(), c.strs(), c.strs(), c.strs()
	if c.next(3) == 0 {
		t.CrossDepends = []model.CrossDep{{Name: fuzzIDs[c.next(len(fuzzIDs))], Role: c.value(2), Policy: []string{"", "all", "any"}[c.next(3)]}}
	}
	if c.next(3) == 0 {
		t.Condition = fmt.Sprint("cond", c.next(3))
	}
	if c.next(3) == 0 {
		b := c.next(2) == 1
		t.FailOnError = &b
	}
	if c.next(3) == 0 {
		t.Strategy = &model.Strategy{Type: []string{"parallel", "one_by_one"}[c.next(2)], Amount: c.next(4)}
	}
	if c.next(2) == 0 {
		if p, ok := c.value(0).(map[string]any); ok {
			t.Parameters = p
		} else {
			t.Parameters = map[string]any{"cmd": "x", "env": map[string]any{"A": c.value(2), "B": nil}}
		}
	}
	if c.next(3) == 0 {
		t.Meta = model.Meta{Retry: c.next(3), Delay: []string{"", "1s"}[c.next(2)]}
	}
	if c.next(3) == 0 {
		t.Extra = map[string]any{fmt.Sprint("x", c.next(3)): c.value(1)}
	}
	for range c.next(3) {
		t.Nulls = append(t.Nulls, fuzzFields[c.next(len(fuzzFields))])
	}
	return t
}

func (c *choices) layers() []LayerGraph {
	var out []LayerGraph
	for range 1 + c.next(5) {
		l := LayerGraph{
			Layer: []model.Layer{model.LayerRelease, model.LayerCluster, model.LayerPlugin, model.LayerPlugin, "bogus"}[c.next(5)],
			Owner: fmt.Sprint("owner-", c.next(3)),
		}
		if c.next(6) > 0 {
			l.Graph = &model.Graph{Type: "default", Name: fmt.Sprint("g", c.next(2))}
			for range c.next(6) {
				l.Graph.Tasks = append(l.Graph.Tasks, c.task())
			}
		}
		out = append(out, l)
	}
	return out
}

// FuzzMerge: merging arbitrary layers never panics, never changes its
// inputs, gives the same answer every time, and a merged graph merged
// alone is itself.
func FuzzMerge(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("release cluster plugin: the same id thrice, nulls and nested parameters"))
	f.Add([]byte{4, 2, 5, 5, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 2, 2, 2, 6, 6, 6, 1, 3, 3, 3, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := (&choices{data: data}).layers()
		pristine := (&choices{data: data}).layers()
		g1, err1 := Merge("default", in...)
		require.Equal(t, pristine, in, "Merge modified its inputs")
		g2, err2 := Merge("default", (&choices{data: data}).layers()...)
		require.Equal(t, err2 == nil, err1 == nil, "errors differ: %v / %v", err1, err2)
		if err1 != nil {
			require.Equal(t, err2.Error(), err1.Error(), "errors differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		require.Equal(t, g2, g1, "merge not deterministic")
		// Order: ids in first-seen order across release, cluster, plugins.
		var want []string
		for _, layer := range []model.Layer{model.LayerRelease, model.LayerCluster, model.LayerPlugin} {
			for _, l := range in {
				if l.Layer != layer || l.Graph == nil {
					continue
				}
				for _, tk := range l.Graph.Tasks {
					if !slices.Contains(want, tk.ID) {
						want = append(want, tk.ID)
					}
				}
			}
		}
		var got []string
		for _, tk := range g1.Tasks {
			got = append(got, tk.ID)
			require.Nil(t, tk.Nulls, "merged task %q keeps nulls", tk.ID)
		}
		require.True(t, slices.Equal(got, want), "order %v, want %v", got, want)
		out1, err := MarshalGraph(g1, "yaml")
		require.NoError(t, err, "marshal")
		_, err = MarshalGraph(g1, "json")
		require.NoError(t, err, "marshal json")
		again, err := Merge("default", LayerGraph{Layer: model.LayerRelease, Owner: "r", Graph: g1})
		require.NoError(t, err, "re-merge")
		out2, _ := MarshalGraph(again, "yaml")
		require.Equal(t, string(out2), string(out1), "merged graph merged alone changed:\n%s\n---\n%s", out1, out2)
	})
}
