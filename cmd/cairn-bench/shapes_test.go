package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.True(t, ok, "dependency on unknown step %s", id)
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
	require.NoError(t, err)
	docs, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "platform.yaml", Data: src})
	require.NoError(t, err)
	return docs.Catalogue
}

// buildPackage parses docs as the API does and builds the steps the
// executor would run.
func buildPackage(t *testing.T, cat *kinds.Catalogue, docs []string) []*model.Step {
	t.Helper()
	parsed, err := graphs.Parse(graphs.Options{Catalogue: cat}, graphs.Source{Name: "bench.yaml", Data: []byte(joinDocs(docs)), Format: graphs.FormatYAML})
	require.NoError(t, err)
	steps, err := graphs.BuildPackage(parsed.Package, parsed.Catalogue, nil)
	require.NoError(t, err)
	return steps
}

// The generated packages are valid, hold N resources, and their longest
// dependency chain, as Cairn builds it, is the one the table divides by.
func TestPackagesAndChains(t *testing.T) {
	cat := platformCatalogue(t)
	dir := t.TempDir()
	for _, shape := range []string{shapeFlat, shapeGroups, shapeChain} {
		fs, err := genFiles(shape, filepath.Join(dir, shape), 100)
		require.NoError(t, err)
		steps := buildPackage(t, cat, fs.yamlDocs())
		require.Len(t, steps, 100, "%s: %d steps, chain %d, want 100 and %d", shape, len(steps), longest(t, steps), fs.chain)
		assert.Equal(t, fs.chain, longest(t, steps), "%s: %d steps, chain %d, want 100 and %d", shape, len(steps), longest(t, steps), fs.chain)
		got := len(fs.expected())
		assert.Equal(t, 100, got, "%s: %d expected files", shape, got)
	}
	ps, err := genPkger(filepath.Join(dir, "pkger"), 100)
	require.NoError(t, err)
	steps := buildPackage(t, cat, ps.yamlDocs())
	require.Len(t, steps, 100, "pkger: %d steps, chain %d, want 100 and %d", len(steps), longest(t, steps), ps.chain)
	assert.Equal(t, ps.chain, longest(t, steps), "pkger: %d steps, chain %d, want 100 and %d", len(steps), longest(t, steps), ps.chain)
	ec := &execChain{dir: dir, n: 50}
	steps = buildPackage(t, cat, ec.yamlDocs())
	require.Len(t, steps, 50, "exec chain: %d steps, chain %d, want 50 and 50", len(steps), longest(t, steps))
	assert.Equal(t, 50, longest(t, steps), "exec chain: %d steps, chain %d, want 50 and 50", len(steps), longest(t, steps))
	_, err = genFiles(shapeGroups, dir, 15)
	assert.Error(t, err, "groups of 15 files")
}

func TestFuelGraphChain(t *testing.T) {
	for _, c := range []struct{ tasks, nodes int }{{1000, 20}, {40, 4}, {30, 1}} {
		g, err := genFuel(c.tasks, c.nodes)
		require.NoError(t, err)
		parsed, err := graphs.ParseGraph(graphs.Options{}, graphs.Source{Name: "release.yaml", Data: []byte(g.yaml())})
		require.NoError(t, err)
		var nodes []model.Node
		for i := range c.nodes {
			nodes = append(nodes, model.Node{ID: g.node(i), Name: g.node(i), Roles: []string{g.role(i)}})
		}
		steps, err := graphs.Expand(parsed, nodes, graphs.ExpandOptions{})
		require.NoError(t, err)
		require.Len(t, steps, c.tasks, "%d tasks on %d nodes: %d steps, chain %d, want %d and %d", c.tasks, c.nodes, len(steps), longest(t, steps), c.tasks, g.chain)
		assert.Equal(t, g.chain, longest(t, steps), "%d tasks on %d nodes: %d steps, chain %d, want %d and %d", c.tasks, c.nodes, len(steps), longest(t, steps), c.tasks, g.chain)
	}
	_, err := genFuel(1000, 30)
	assert.Error(t, err, "1000 tasks on 30 nodes")
}

func TestPuppetManifest(t *testing.T) {
	fs, err := genFiles(shapeChain, "/srv/x", 3)
	require.NoError(t, err)
	m := fs.puppetManifest()
	for _, want := range []string{
		"file { \"/srv/x/c000000\":\n  ensure  => file,\n  content => \"link 0\\n\",",
		"require => [File[\"/srv/x/c000001\"]],",
	} {
		assert.Contains(t, m, want, "manifest lacks %q:\n%s", want, m)
	}
	got := strings.Count(m, "file {")
	assert.Equal(t, 3, got, "%d resources in the manifest", got)
	assert.Equal(t, `"a\"\$b\\"`, puppetString(`a"$b\`), "puppetString")
}

func TestParseStatusKiB(t *testing.T) {
	in := "Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    1756 kB\nVmRSS:\t 12 kB\n"
	require.Equal(t, int64(1756), parseStatusKiB(strings.NewReader(in), "VmHWM:"), "VmHWM")
	require.Equal(t, int64(12), parseStatusKiB(strings.NewReader(in), "VmRSS:"), "VmRSS")
	require.Zero(t, parseStatusKiB(strings.NewReader(in), "VmSwap:"), "a field not there")
	require.Equal(t, "1,234,567", thousands(1234567))
}
