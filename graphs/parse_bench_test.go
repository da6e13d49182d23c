package graphs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// tenKTasks is a Fuel graph of n tasks in YAML: shell tasks in chains of
// ten, with roles, requires/required_for, a strategy and parameters, and
// a group every hundred tasks.
func tenKTasks(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: cairn/v1\nkind: Graph\nmetadata: {name: Bench, type: bench}\ntasks:\n")
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			fmt.Fprintf(&b, "  - id: group-%d\n    type: group\n    roles: [controller]\n    fault_tolerance: 10%%\n", i/100)
			continue
		}
		fmt.Fprintf(&b, "  - id: task-%d\n    type: shell\n    version: 2.1.0\n    roles: [controller, /^compute-\\d+$/]\n", i)
		if i%10 != 1 {
			fmt.Fprintf(&b, "    requires: [task-%d]\n", i-1)
		}
		fmt.Fprintf(&b, "    groups: [group-%d]\n", i/100)
		fmt.Fprintf(&b, "    strategy: {type: parallel, amount: 3}\n")
		fmt.Fprintf(&b, "    condition: 'eq .node.name \"node-%d\"'\n", i%7)
		fmt.Fprintf(&b, "    parameters:\n      cmd: echo task %d >> /tmp/bench.log\n      timeout: 60\n      retries: 2\n", i)
	}
	return b.Bytes()
}

// tenKResources is a package of n resources in YAML: directories, files
// inside them (dependsOn their directory) and commands.
func tenKResources(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: cairn/v1\nkind: Directory\nmetadata: {name: dir-%d}\nspec: {path: /srv/d%d, mode: \"0755\"}\n", i, i)
		case 1:
			fmt.Fprintf(&b, "apiVersion: cairn/v1\nkind: File\nmetadata: {name: file-%d}\nspec:\n  path: /srv/d%d/f\n  content: \"hello {{ env \\\"SITE\\\" }}\"\n  mode: 420\ndependsOn: [Directory/dir-%d]\ntarget: {roles: [web]}\n", i, i-1, i-1)
		default:
			fmt.Fprintf(&b, "apiVersion: cairn/v1\nkind: Exec\nmetadata: {name: cmd-%d}\nspec: {command: \"touch /srv/d%d/done\", creates: /srv/d%d/done, timeout: 30}\ndependsOn: [File/file-%d]\nmeta: {retry: 2, delay: 1s}\n", i, i-2, i-2, i-1)
		}
	}
	return b.Bytes()
}

func BenchmarkParseValidate10k(b *testing.B) {
	cases := []struct {
		name      string
		data      []byte
		resources int
		tasks     int
	}{
		{"graph-10k-tasks", tenKTasks(10000), 0, 10000},
		{"package-10k-resources", tenKResources(10000), 10000, 0},
		{"graph-10k-tasks-json", yamlToJSON(b, tenKTasks(10000)), 0, 10000},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			cpu0 := processCPU()
			defer func() { reportCPU(b, cpu0) }()
			for b.Loop() {
				docs, err := Parse(Options{}, Source{Name: "bench", Data: c.data})
				require.NoError(b, err, "%v", truncate(err, 500))
				tasks := 0
				for _, g := range docs.Graphs {
					tasks += len(g.Tasks)
				}
				require.Len(b, docs.Package.Resources, c.resources, "read %d resources and %d tasks", len(docs.Package.Resources), tasks)
				require.Equal(b, c.tasks, tasks, "read %d resources and %d tasks", len(docs.Package.Resources), tasks)
			}
		})
	}
}

// BenchmarkYAMLDecode10k decodes the 10,000-task graph into yaml.v3 nodes
// and nothing else: the share of BenchmarkParseValidate10k spent in the
// YAML library.
func BenchmarkYAMLDecode10k(b *testing.B) {
	data := tenKTasks(10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := processCPU()
	defer func() { reportCPU(b, cpu0) }()
	for b.Loop() {
		var n yaml.Node
		require.NoError(b, yaml.NewDecoder(bytes.NewReader(data)).Decode(&n))
	}
}

// reportCPU adds the process CPU time per operation (all threads, the
// garbage collector's included), which a busy machine inflates far less
// than wall time.
func reportCPU(b *testing.B, start time.Duration) {
	if start < 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64((processCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// yamlToJSON re-encodes a YAML document as JSON.
func yamlToJSON(b *testing.B, data []byte) []byte {
	var v any
	require.NoError(b, yaml.Unmarshal(data, &v))
	out, err := json.Marshal(v)
	require.NoError(b, err)
	return out
}
