package graphs

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// pipelineLayers generates a release graph of n tasks, a cluster layer
// overriding every 20th of them and a plugin adding n/50 tasks, as YAML.
func pipelineLayers(n int) (release, cluster, plugin []byte) {
	roles := []string{"[controller]", "[compute]", "['*']", "[primary-controller]"}
	var r strings.Builder
	r.WriteString("apiVersion: cairn/v1\nkind: Graph\nmetadata: {name: Bench, type: default}\ntasks:\n")
	r.WriteString("  - {id: deploy_start, type: stage}\n  - {id: deploy_end, type: stage, requires: [deploy_start]}\n")
	for i := range n {
		fmt.Fprintf(&r, "  - id: task-%05d\n    type: shell\n    roles: %s\n", i, roles[i%len(roles)])
		switch {
		case i == 0:
			r.WriteString("    requires: [deploy_start]\n")
		case i < 7:
			fmt.Fprintf(&r, "    requires: [task-%05d]\n", i-1)
		default:
			fmt.Fprintf(&r, "    requires: [task-%05d, task-%05d]\n", i-1, i-7)
		}
		if i%10 == 9 {
			r.WriteString("    required_for: [deploy_end]\n")
		}
		if i%25 == 24 {
			fmt.Fprintf(&r, "    cross_depends: [{name: task-%05d, role: controller}]\n", i-11)
		}
		fmt.Fprintf(&r, "    condition: 'true'\n    parameters: {cmd: 'echo %d', timeout: 60}\n", i)
	}
	var c strings.Builder
	for i := 0; i < n; i += 20 {
		fmt.Fprintf(&c, "- id: task-%05d\n  condition: null\n  strategy: {type: parallel, amount: 2}\n  parameters: {cmd: 'echo cluster %d'}\n", i, i)
	}
	var p strings.Builder
	for i := range n / 50 {
		fmt.Fprintf(&p, "- {id: plugin-%04d, type: shell, roles: ['*'], requires: [task-%05d], required_for: [deploy_end], parameters: {cmd: 'echo plugin'}}\n", i, i*50)
	}
	return []byte(r.String()), []byte(c.String()), []byte(p.String())
}

var benchNodes = []model.Node{
	{ID: "n1", Roles: []string{"primary-controller", "controller"}},
	{ID: "n2", Roles: []string{"controller"}},
	{ID: "n3", Roles: []string{"compute"}},
}

// runPipeline parses the three layers, merges them, validates the merged
// graph, expands it onto the nodes and sorts the steps.
func runPipeline(cat *kinds.Catalogue, release, cluster, plugin []byte) (int, int, error) {
	opts := Options{Catalogue: cat, Partial: true}
	var layers []LayerGraph
	for _, l := range []struct {
		layer model.Layer
		name  string
		data  []byte
	}{{model.LayerRelease, "release.yaml", release}, {model.LayerCluster, "cluster.yaml", cluster}, {model.LayerPlugin, "plugin.yaml", plugin}} {
		g, err := ParseGraph(opts, Source{Name: l.name, Data: l.data})
		if err != nil {
			return 0, 0, err
		}
		layers = append(layers, LayerGraph{Layer: l.layer, Owner: l.name, Graph: g})
	}
	merged, err := Merge("default", layers...)
	if err != nil {
		return 0, 0, err
	}
	if errs := ValidateGraph(cat, merged); len(errs) > 0 {
		return 0, 0, errs
	}
	steps, err := Expand(merged, benchNodes, ExpandOptions{Catalogue: cat})
	if err != nil {
		return 0, 0, err
	}
	sorted, err := Sort(steps)
	if err != nil {
		return 0, 0, err
	}
	return len(steps), len(sorted), nil
}

func TestPipeline(t *testing.T) {
	release, cluster, plugin := pipelineLayers(1000)
	steps, layers, err := runPipeline(kinds.Builtin(), release, cluster, plugin)
	require.NoError(t, err)
	// 1000 tasks over 4 role patterns on 3 nodes (controller: 2 nodes,
	// compute: 1, '*': 3, primary-controller: 1 → 7 per 4 tasks), 20
	// plugin tasks on 3 nodes, 2 stages.
	want := 1000/4*7 + 20*3 + 2
	require.Equal(t, want, steps, "steps")
	require.GreaterOrEqual(t, layers, 100, "only %d layers for a chain-heavy graph", layers)
}

// BenchmarkPipeline10k: parse three layers (10,000 release tasks, 500
// cluster overrides, 200 plugin tasks), merge, validate, expand onto three
// nodes and sort.
func BenchmarkPipeline10k(b *testing.B) {
	release, cluster, plugin := pipelineLayers(10_000)
	cat := kinds.Builtin()
	b.SetBytes(int64(len(release) + len(cluster) + len(plugin)))
	start := pipelineCPUTime()
	for b.Loop() {
		_, _, err := runPipeline(cat, release, cluster, plugin)
		require.NoError(b, err)
	}
	// CPU time per op, which other work on a shared machine disturbs less
	// than wall time (it includes the garbage collector's threads).
	b.ReportMetric(float64(pipelineCPUTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

func pipelineCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The stages alone, to see where the time goes.
func BenchmarkPipelineStages10k(b *testing.B) {
	release, cluster, plugin := pipelineLayers(10_000)
	cat := kinds.Builtin()
	opts := Options{Catalogue: cat, Partial: true}
	parse := func(name string, data []byte) *model.Graph {
		g, err := ParseGraph(opts, Source{Name: name, Data: data})
		require.NoError(b, err)
		return g
	}
	layers := []LayerGraph{
		{Layer: model.LayerRelease, Owner: "r", Graph: parse("release.yaml", release)},
		{Layer: model.LayerCluster, Owner: "c", Graph: parse("cluster.yaml", cluster)},
		{Layer: model.LayerPlugin, Owner: "p", Graph: parse("plugin.yaml", plugin)},
	}
	merged, err := Merge("default", layers...)
	require.NoError(b, err)
	steps, err := Expand(merged, benchNodes, ExpandOptions{Catalogue: cat})
	require.NoError(b, err)
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			parse("release.yaml", release)
			parse("cluster.yaml", cluster)
			parse("plugin.yaml", plugin)
		}
	})
	b.Run("merge", func(b *testing.B) {
		for b.Loop() {
			_, err := Merge("default", layers...)
			require.NoError(b, err)
		}
	})
	b.Run("validate", func(b *testing.B) {
		for b.Loop() {
			errs := ValidateGraph(cat, merged)
			require.LessOrEqual(b, len(errs), 0, "%v", errs)
		}
	})
	b.Run("expand", func(b *testing.B) {
		for b.Loop() {
			_, err := Expand(merged, benchNodes, ExpandOptions{Catalogue: cat})
			require.NoError(b, err)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			_, err := Sort(steps)
			require.NoError(b, err)
		}
	})
	for _, format := range []string{"yaml", "json"} {
		b.Run("marshal-"+format, func(b *testing.B) {
			for b.Loop() {
				_, err := MarshalGraph(merged, format)
				require.NoError(b, err)
			}
		})
	}
}
