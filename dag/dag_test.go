package dag

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// edges builds a graph from "a>b" pairs (a depends on b) and lone vertices.
func build(spec ...string) *Graph {
	g := New()
	for _, s := range spec {
		if from, to, ok := strings.Cut(s, ">"); ok {
			g.Connect(from, to)
		} else {
			g.Add(s)
		}
	}
	return g
}

func TestGraphBasics(t *testing.T) {
	g := build("c", "a>b", "a>c", "b>c", "a>b", "d")
	got, want := g.Vertices(), []string{"c", "a", "b", "d"}
	require.Equal(t, want, got, "Vertices = %v, want insertion order %v", got, want)
	tests := []struct {
		id         string
		has        bool
		deps, rdep []string
	}{
		{"a", true, []string{"b", "c"}, nil},
		{"b", true, []string{"c"}, []string{"a"}},
		{"c", true, nil, []string{"a", "b"}},
		{"d", true, nil, nil},
		{"zz", false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			require.Equal(t, tt.has, g.Has(tt.id), "Has(%q) = %v", tt.id, !tt.has)
			got := g.Deps(tt.id)
			require.Equal(t, tt.deps, got, "Deps")
			got = g.Dependents(tt.id)
			require.Equal(t, tt.rdep, got, "Dependents")
		})
	}
	require.False(t, g.AddEdge("a", "b"), "AddEdge must report only new edges")
	require.True(t, g.AddEdge("d", "c"), "AddEdge must report only new edges")
	require.True(t, g.HasEdge("d", "c"), "AddEdge must report only new edges")
	g.Connect("d", "c")
	require.Equal(t, 4, g.EdgeCount(), "EdgeCount = %d, want 4 (duplicate edges kept once)", g.EdgeCount())
	require.True(t, g.HasEdge("a", "b"), "HasEdge wrong")
	require.False(t, g.HasEdge("b", "a"), "HasEdge wrong")
	require.False(t, g.HasEdge("a", "zz"), "HasEdge wrong")
	require.Equal(t, 4, g.Len(), "Len")
}

func TestLayers(t *testing.T) {
	tests := []struct {
		name string
		spec []string
		want [][]string
	}{
		{"empty", nil, nil},
		{"single", []string{"a"}, [][]string{{"a"}}},
		{"chain", []string{"c>b", "b>a"}, [][]string{{"a"}, {"b"}, {"c"}}},
		{"diamond", []string{"d>b", "d>c", "b>a", "c>a"}, [][]string{{"a"}, {"b", "c"}, {"d"}}},
		{"deepest dependency decides", []string{"x>a", "x>c", "c>b", "b>a"}, [][]string{{"a"}, {"b"}, {"c"}, {"x"}}},
		{"independent vertices in insertion order", []string{"z", "y", "x"}, [][]string{{"z", "y", "x"}}},
		{"layer order is insertion order, not discovery order", []string{"q", "p", "q>r", "p>r"}, [][]string{{"r"}, {"q", "p"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.spec...)
			got, err := g.Layers()
			require.NoError(t, err)
			require.Equal(t, tt.want, got, "Layers")
			order, err := g.TopoOrder()
			require.NoError(t, err)
			want := slices.Concat(tt.want...)
			require.True(t, slices.Equal(order, want), "TopoOrder = %v, want %v", order, want)
		})
	}
}

func TestCycles(t *testing.T) {
	tests := []struct {
		name string
		spec []string
		want [][]string
	}{
		{"acyclic", []string{"a>b", "b>c", "a>c"}, nil},
		{"self edge", []string{"x", "a>a"}, [][]string{{"a"}}},
		{"two", []string{"a>b", "b>a"}, [][]string{{"a", "b"}}},
		{"triangle in order", []string{"a>b", "b>c", "c>a", "c>z"}, [][]string{{"a", "b", "c"}}},
		{"triangle rotated to earliest member", []string{"z", "b>c", "c>a", "a>b"}, [][]string{{"b", "c", "a"}}},
		{"two components", []string{"a>b", "b>a", "m>n", "c>d", "d>e", "e>c", "b>c"}, [][]string{{"a", "b"}, {"c", "d", "e"}}},
		{"figure eight covered by two cycles", []string{"a>b", "b>a", "a>c", "c>a"}, [][]string{{"a", "b"}, {"a", "c"}}},
		{"chord: shortest way back", []string{"a>b", "b>c", "c>d", "d>a", "b>a"}, [][]string{{"a", "b", "c", "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(tt.spec...)
			got := g.Cycles()
			require.Equal(t, tt.want, got, "Cycles")
			checkCycles(t, g, got)
			_, err := g.Layers()
			require.Equal(t, tt.want != nil, err != nil, "Layers err = %v", err)
			if err != nil {
				var ce *CycleError
				require.ErrorAs(t, err, &ce, "Layers err = %#v, want CycleError with %v", err, tt.want)
				require.Equal(t, tt.want, ce.Cycles, "Layers err = %#v, want CycleError with %v", err, tt.want)
				require.Contains(t, err.Error(), FormatCycle(tt.want[0]), "error %q does not name cycle %s", err, FormatCycle(tt.want[0]))
			}
		})
	}
}

func TestCycleErrorMessage(t *testing.T) {
	g := build("a>b", "b>c", "c>a")
	_, err := g.TopoOrder()
	require.Error(t, err)
	require.Equal(t, "dependency cycle: a -> b -> c -> a", err.Error(), "err = %v", err)
	g.Connect("x", "x")
	_, err = g.TopoOrder()
	require.Error(t, err)
	require.Equal(t, "dependency cycles: a -> b -> c -> a; x -> x", err.Error(), "err = %v", err)
}

// checkCycles asserts every reported cycle is elementary and made of real
// edges, and that together they cover exactly the vertices lying on cycles.
func checkCycles(t *testing.T, g *Graph, cycles [][]string) {
	t.Helper()
	covered := map[string]bool{}
	for _, c := range cycles {
		seen := map[string]bool{}
		for i, v := range c {
			require.False(t, seen[v], "cycle %v repeats %s", c, v)
			seen[v] = true
			covered[v] = true
			next := c[(i+1)%len(c)]
			require.True(t, g.HasEdge(v, next), "cycle %v: %s does not depend on %s", c, v, next)
		}
	}
	for _, v := range g.Vertices() {
		require.Equal(t, covered[v], onCycle(g, v), "vertex %s: on a cycle = %v, covered = %v (cycles %v)", v, onCycle(g, v), covered[v], cycles)
	}
}

// onCycle is the brute-force definition: v reaches itself.
func onCycle(g *Graph, v string) bool {
	seen := map[string]bool{}
	stack := g.Deps(v)
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == v {
			return true
		}
		if seen[u] {
			continue
		}
		seen[u] = true
		stack = append(stack, g.Deps(u)...)
	}
	return false
}

func TestRandomGraphsProperties(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(25)
		m := rng.IntN(3 * n)
		g := New()
		for i := range n {
			g.Add(fmt.Sprint("v", i))
		}
		for range m {
			a, b := rng.IntN(n), rng.IntN(n)
			if seed%2 == 0 && a <= b { // half the graphs acyclic
				continue
			}
			g.Connect(fmt.Sprint("v", a), fmt.Sprint("v", b))
		}
		cycles := g.Cycles()
		checkCycles(t, g, cycles)
		require.Equal(t, g.Cycles(), cycles, "seed %d: Cycles not deterministic", seed)
		layers, err := g.Layers()
		require.Equal(t, len(cycles) > 0, err != nil, "seed %d: Layers err %v with cycles %v", seed, err, cycles)
		if err != nil {
			continue
		}
		level := map[string]int{}
		for i, l := range layers {
			for _, v := range l {
				level[v] = i
			}
		}
		require.Len(t, level, n, "seed %d: layers hold %d of %d vertices", seed, len(level), n)
		for _, v := range g.Vertices() {
			want := 0
			for _, d := range g.Deps(v) {
				want = max(want, level[d]+1)
			}
			require.Equal(t, want, level[v], "seed %d: %s in layer %d, want %d", seed, v, level[v], want)
		}
	}
}

func TestDeepChainDoesNotOverflow(t *testing.T) {
	const n = 200_000
	g := New()
	for i := 1; i < n; i++ {
		g.Connect(fmt.Sprint(i), fmt.Sprint(i-1))
	}
	layers, err := g.Layers()
	require.NoError(t, err, "layers = %d, err = %v", len(layers), err)
	require.Len(t, layers, n, "layers = %d, err = %v", len(layers), err)
	g.Connect("0", fmt.Sprint(n-1)) // close the ring
	cycles := g.Cycles()
	require.Len(t, cycles, 1)
	require.Len(t, cycles[0], n, "ring: %d cycles, first of", len(cycles))
}

func TestLongChainWithBackEdgesIsOneCycle(t *testing.T) {
	// r → a1 → … → ak, each ai → r: the farthest-first cover finds one long
	// cycle instead of k overlapping ones.
	g := New()
	const k = 2000
	prev := "r"
	for i := 1; i <= k; i++ {
		a := fmt.Sprint("a", i)
		g.Connect(prev, a)
		g.Connect(a, "r")
		prev = a
	}
	cycles := g.Cycles()
	checkCycles(t, g, cycles)
	require.LessOrEqual(t, len(cycles), 2, "%d cycles, want at most 2", len(cycles))
}

// randomDAG has n vertices and m edges, each from a higher to a lower
// number, added in a shuffled order.
func randomDAG(n, m int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 1))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%06d", i)
	}
	g := NewWithCapacity(n)
	for _, i := range rng.Perm(n) {
		g.Add(ids[i])
	}
	for range m {
		a := 1 + rng.IntN(n-1)
		b := rng.IntN(a)
		g.Connect(ids[a], ids[b])
	}
	return g
}

func BenchmarkBuild100k(b *testing.B) {
	for b.Loop() {
		randomDAG(100_000, 200_000, 1)
	}
}

func BenchmarkLayerIndexes100k(b *testing.B) {
	g := randomDAG(100_000, 200_000, 1)
	for b.Loop() {
		_, err := g.LayerIndexes()
		require.NoError(b, err)
	}
}

func BenchmarkCycles100k(b *testing.B) {
	g := randomDAG(100_000, 200_000, 1)
	for i := 0; i < 100; i++ { // a hundred back edges make cycles
		g.Connect(fmt.Sprintf("task-%06d", i), fmt.Sprintf("task-%06d", 99_999-i))
	}
	b.ResetTimer()
	for b.Loop() {
		require.NotEmpty(b, g.Cycles(), "no cycles")
	}
}

func TestLayerIndexes(t *testing.T) {
	g := build("c>a", "b", "a")
	got, err := g.LayerIndexes()
	// Insertion numbers: c=0, a=1, b=2.
	require.NoError(t, err, "LayerIndexes = %v, %v", got, err)
	require.Equal(t, [][]int{{1, 2}, {0}}, got, "LayerIndexes = %v, %v", got, err)
}
