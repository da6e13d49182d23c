package graphe2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// benchGraph is 50 tasks in 5 layers of 10 on every node; each task after
// the first layer requires two tasks of the layer before it.
func benchGraph(task func(id string) string) string {
	var b strings.Builder
	for layer := range 5 {
		for i := range 10 {
			id := fmt.Sprintf("t%d%d", layer, i)
			b.WriteString(task(id))
			if layer > 0 {
				fmt.Fprintf(&b, "  requires: [t%d%d, t%d%d]\n", layer-1, i, layer-1, (i+1)%10)
			}
		}
	}
	return b.String()
}

// BenchmarkGraph1000Steps runs one graph of 50 tasks on 20 local nodes:
// 1,000 steps per execution, on the dev server.
func BenchmarkGraph1000Steps(b *testing.B) {
	shell := func(id string) string {
		return fmt.Sprintf("- id: %s\n  type: shell\n  roles: [\"*\"]\n  parameters: {cmd: \"echo %s >> runs.log\"}\n", id, id)
	}
	files := func(id string) string {
		return fmt.Sprintf("- id: %s\n  type: upload_file\n  roles: [\"*\"]\n  parameters: {path: \"%s.txt\", data: \"%s\"}\n", id, id, id)
	}
	cases := []struct {
		name        string
		task        func(string) string
		parallelism int
	}{
		{"shell/parallelism=10", shell, 10},
		{"shell/parallelism=100", shell, 100},
		{"upload_file/parallelism=100", files, 100},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var nodes []model.Node
			for i := range 20 {
				id := fmt.Sprintf("n%02d", i)
				nodes = append(nodes, model.Node{ID: id, Name: id, Roles: []string{"compute"}})
			}
			h := newHarness(b, harnessOptions{parallelism: c.parallelism}, nodes...)
			h.putGraph(model.LayerRelease, "rel", "default", benchGraph(c.task))
			steps := 0
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				e := h.run(contract.GraphRequest{Force: true})
				require.Equal(b, model.ExecCompleted, e.Status, "execution %s: %s (%s)", e.ID, e.Status, e.Error)
				if e.Progress != nil {
					steps += e.Progress.Total
				}
			}
			elapsed := time.Since(start)
			b.ReportMetric(float64(steps)/elapsed.Seconds(), "steps/s")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/execution")
		})
	}
}
