package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-io/cairn/examples"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// longest is the number of steps on the longest dependency path.
func longest(t *testing.T, steps []*model.Step) int {
	t.Helper()
	byID := map[string]*model.Step{}
	for _, s := range steps {
		byID[s.ID] = s
	}
	depth := map[string]int{}
	var visit func(id string) int
	visit = func(id string) int {
		if d, ok := depth[id]; ok {
			return d
		}
		s, ok := byID[id]
		if !ok {
			t.Fatalf("dependency on unknown step %s", id)
		}
		d := 0
		for _, dep := range s.Deps {
			d = max(d, visit(dep))
		}
		for _, group := range s.AnyOf {
			for _, dep := range group {
				d = max(d, visit(dep))
			}
		}
		depth[id] = d + 1
		return d + 1
	}
	out := 0
	for _, s := range steps {
		out = max(out, visit(s.ID))
	}
	return out
}

// platformCatalogue is the built-in catalogue with the example platform
// kinds, as the benchmark's server loads them.
func platformCatalogue(t *testing.T) *kinds.Catalogue {
	t.Helper()
	src, err := examples.Files.ReadFile("platform/kinds/platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "platform.yaml", Data: src})
	if err != nil {
		t.Fatal(err)
	}
	return docs.Catalogue
}

// buildPackage parses docs as the API does and builds the steps the
// executor would run.
func buildPackage(t *testing.T, cat *kinds.Catalogue, docs []string) []*model.Step {
	t.Helper()
	parsed, err := graphs.Parse(graphs.Options{Catalogue: cat}, graphs.Source{Name: "bench.yaml", Data: []byte(joinDocs(docs)), Format: graphs.FormatYAML})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := graphs.BuildPackage(parsed.Package, parsed.Catalogue, nil)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// The generated packages are valid, hold N resources, and their longest
// dependency chain, as Cairn builds it, is the one the table divides by.
func TestPackagesAndChains(t *testing.T) {
	cat := platformCatalogue(t)
	dir := t.TempDir()
	for _, shape := range []string{shapeFlat, shapeGroups, shapeChain} {
		fs, err := genFiles(shape, filepath.Join(dir, shape), 100)
		if err != nil {
			t.Fatal(err)
		}
		steps := buildPackage(t, cat, fs.yamlDocs())
		if len(steps) != 100 || longest(t, steps) != fs.chain {
			t.Errorf("%s: %d steps, chain %d, want 100 and %d", shape, len(steps), longest(t, steps), fs.chain)
		}
		if got := len(fs.expected()); got != 100 {
			t.Errorf("%s: %d expected files", shape, got)
		}
	}
	ps, err := genPkger(filepath.Join(dir, "pkger"), 100)
	if err != nil {
		t.Fatal(err)
	}
	steps := buildPackage(t, cat, ps.yamlDocs())
	if len(steps) != 100 || longest(t, steps) != ps.chain {
		t.Errorf("pkger: %d steps, chain %d, want 100 and %d", len(steps), longest(t, steps), ps.chain)
	}
	ec := &execChain{dir: dir, n: 50}
	steps = buildPackage(t, cat, ec.yamlDocs())
	if len(steps) != 50 || longest(t, steps) != 50 {
		t.Errorf("exec chain: %d steps, chain %d, want 50 and 50", len(steps), longest(t, steps))
	}
	if _, err := genFiles(shapeGroups, dir, 15); err == nil {
		t.Error("groups of 15 files")
	}
}

func TestFuelGraphChain(t *testing.T) {
	for _, c := range []struct{ tasks, nodes int }{{1000, 20}, {40, 4}, {30, 1}} {
		g, err := genFuel(c.tasks, c.nodes)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := graphs.ParseGraph(graphs.Options{}, graphs.Source{Name: "release.yaml", Data: []byte(g.yaml())})
		if err != nil {
			t.Fatal(err)
		}
		var nodes []model.Node
		for i := range c.nodes {
			nodes = append(nodes, model.Node{ID: g.node(i), Name: g.node(i), Roles: []string{g.role(i)}})
		}
		steps, err := graphs.Expand(parsed, nodes, graphs.ExpandOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != c.tasks || longest(t, steps) != g.chain {
			t.Errorf("%d tasks on %d nodes: %d steps, chain %d, want %d and %d", c.tasks, c.nodes, len(steps), longest(t, steps), c.tasks, g.chain)
		}
	}
	if _, err := genFuel(1000, 30); err == nil {
		t.Error("1000 tasks on 30 nodes")
	}
}

func TestPuppetManifest(t *testing.T) {
	fs, err := genFiles(shapeChain, "/srv/x", 3)
	if err != nil {
		t.Fatal(err)
	}
	m := fs.puppetManifest()
	for _, want := range []string{
		"file { \"/srv/x/c000000\":\n  ensure  => file,\n  content => \"link 0\\n\",",
		"require => [File[\"/srv/x/c000001\"]],",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
	if got := strings.Count(m, "file {"); got != 3 {
		t.Errorf("%d resources in the manifest", got)
	}
	if puppetString(`a"$b\`) != `"a\"\$b\\"` {
		t.Errorf("puppetString: %s", puppetString(`a"$b\`))
	}
}

func TestParseVmHWM(t *testing.T) {
	in := "Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    1756 kB\nVmRSS:\t 12 kB\n"
	if got := parseVmHWM(strings.NewReader(in)); got != 1756 {
		t.Fatalf("VmHWM = %d", got)
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Fatalf("thousands = %s", got)
	}
}
