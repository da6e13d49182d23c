package dag

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
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
	if got, want := g.Vertices(), []string{"c", "a", "b", "d"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Vertices = %v, want insertion order %v", got, want)
	}
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
			if g.Has(tt.id) != tt.has {
				t.Fatalf("Has(%q) = %v", tt.id, !tt.has)
			}
			if got := g.Deps(tt.id); !reflect.DeepEqual(got, tt.deps) {
				t.Fatalf("Deps = %v, want %v", got, tt.deps)
			}
			if got := g.Dependents(tt.id); !reflect.DeepEqual(got, tt.rdep) {
				t.Fatalf("Dependents = %v, want %v", got, tt.rdep)
			}
		})
	}
	if g.AddEdge("a", "b") || !g.AddEdge("d", "c") || !g.HasEdge("d", "c") {
		t.Fatal("AddEdge must report only new edges")
	}
	g.Connect("d", "c")
	if g.EdgeCount() != 4 {
		t.Fatalf("EdgeCount = %d, want 4 (duplicate edges kept once)", g.EdgeCount())
	}
	if !g.HasEdge("a", "b") || g.HasEdge("b", "a") || g.HasEdge("a", "zz") {
		t.Fatal("HasEdge wrong")
	}
	if g.Len() != 4 {
		t.Fatalf("Len = %d", g.Len())
	}
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
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Layers = %v, want %v", got, tt.want)
			}
			order, err := g.TopoOrder()
			if err != nil {
				t.Fatal(err)
			}
			if want := slices.Concat(tt.want...); !slices.Equal(order, want) {
				t.Fatalf("TopoOrder = %v, want %v", order, want)
			}
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
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Cycles = %v, want %v", got, tt.want)
			}
			checkCycles(t, g, got)
			_, err := g.Layers()
			if (err != nil) != (tt.want != nil) {
				t.Fatalf("Layers err = %v", err)
			}
			if err != nil {
				var ce *CycleError
				if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Cycles, tt.want) {
					t.Fatalf("Layers err = %#v, want CycleError with %v", err, tt.want)
				}
				if !strings.Contains(err.Error(), FormatCycle(tt.want[0])) {
					t.Fatalf("error %q does not name cycle %s", err, FormatCycle(tt.want[0]))
				}
			}
		})
	}
}

func TestCycleErrorMessage(t *testing.T) {
	g := build("a>b", "b>c", "c>a")
	_, err := g.TopoOrder()
	if err == nil || err.Error() != "dependency cycle: a -> b -> c -> a" {
		t.Fatalf("err = %v", err)
	}
	g.Connect("x", "x")
	_, err = g.TopoOrder()
	if err == nil || err.Error() != "dependency cycles: a -> b -> c -> a; x -> x" {
		t.Fatalf("err = %v", err)
	}
}

// checkCycles asserts every reported cycle is elementary and made of real
// edges, and that together they cover exactly the vertices lying on cycles.
func checkCycles(t *testing.T, g *Graph, cycles [][]string) {
	t.Helper()
	covered := map[string]bool{}
	for _, c := range cycles {
		seen := map[string]bool{}
		for i, v := range c {
			if seen[v] {
				t.Fatalf("cycle %v repeats %s", c, v)
			}
			seen[v] = true
			covered[v] = true
			next := c[(i+1)%len(c)]
			if !g.HasEdge(v, next) {
				t.Fatalf("cycle %v: %s does not depend on %s", c, v, next)
			}
		}
	}
	for _, v := range g.Vertices() {
		if onCycle(g, v) != covered[v] {
			t.Fatalf("vertex %s: on a cycle = %v, covered = %v (cycles %v)", v, onCycle(g, v), covered[v], cycles)
		}
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
		if !reflect.DeepEqual(cycles, g.Cycles()) {
			t.Fatalf("seed %d: Cycles not deterministic", seed)
		}
		layers, err := g.Layers()
		if (err != nil) != (len(cycles) > 0) {
			t.Fatalf("seed %d: Layers err %v with cycles %v", seed, err, cycles)
		}
		if err != nil {
			continue
		}
		level := map[string]int{}
		for i, l := range layers {
			for _, v := range l {
				level[v] = i
			}
		}
		if len(level) != n {
			t.Fatalf("seed %d: layers hold %d of %d vertices", seed, len(level), n)
		}
		for _, v := range g.Vertices() {
			want := 0
			for _, d := range g.Deps(v) {
				want = max(want, level[d]+1)
			}
			if level[v] != want {
				t.Fatalf("seed %d: %s in layer %d, want %d", seed, v, level[v], want)
			}
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
	if err != nil || len(layers) != n {
		t.Fatalf("layers = %d, err = %v", len(layers), err)
	}
	g.Connect("0", fmt.Sprint(n-1)) // close the ring
	cycles := g.Cycles()
	if len(cycles) != 1 || len(cycles[0]) != n {
		t.Fatalf("ring: %d cycles, first of %d", len(cycles), len(cycles[0]))
	}
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
	if len(cycles) > 2 {
		t.Fatalf("%d cycles, want at most 2", len(cycles))
	}
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

func BenchmarkLayers100k(b *testing.B) {
	g := randomDAG(100_000, 200_000, 1)
	for b.Loop() {
		if _, err := g.Layers(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTopoOrder100k(b *testing.B) {
	g := randomDAG(100_000, 200_000, 1)
	for b.Loop() {
		if _, err := g.TopoOrder(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCycles100k(b *testing.B) {
	g := randomDAG(100_000, 200_000, 1)
	for i := 0; i < 100; i++ { // a hundred back edges make cycles
		g.Connect(fmt.Sprintf("task-%06d", i), fmt.Sprintf("task-%06d", 99_999-i))
	}
	b.ResetTimer()
	for b.Loop() {
		if len(g.Cycles()) == 0 {
			b.Fatal("no cycles")
		}
	}
}

func TestLayerIndexes(t *testing.T) {
	g := build("c>a", "b", "a")
	got, err := g.LayerIndexes()
	// Insertion numbers: c=0, a=1, b=2.
	if err != nil || !reflect.DeepEqual(got, [][]int{{1, 2}, {0}}) {
		t.Fatalf("LayerIndexes = %v, %v", got, err)
	}
}
