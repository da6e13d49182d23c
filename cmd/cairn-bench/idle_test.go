package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestAgentNodesSpreadEvenly(t *testing.T) {
	for _, tc := range []struct {
		nodes, agents int
		want          []int // indexes of the agent nodes
	}{
		{8, 8, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{8, 0, nil},
		{200, 50, func() (out []int) {
			for i := 3; i < 200; i += 4 {
				out = append(out, i)
			}
			return out
		}()},
		{10, 3, []int{2, 5, 9}},
	} {
		nodes := make([]model.Node, tc.nodes)
		agentNodes(nodes, tc.agents)
		var got []int
		for i, n := range nodes {
			if n.Mode == model.NodeAgent {
				got = append(got, i)
			}
		}
		assert.Equal(t, tc.want, got, "%d of %d nodes", tc.agents, tc.nodes)
	}
}

func TestPromGauge(t *testing.T) {
	text := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 1234\ngo_threads 9\n"
	n, err := promGauge([]byte(text), "go_goroutines")
	require.NoError(t, err)
	assert.Equal(t, 1234, n)
	_, err = promGauge([]byte(text), "go_gc_duration_seconds")
	assert.ErrorContains(t, err, "no go_gc_duration_seconds")
}

func TestCountEstablished(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
`
	got := countEstablished(strings.NewReader(table), map[string]bool{"111": true, "222": true})
	assert.Equal(t, 1, got, "the listening socket (0A) and another process's connection do not count")
}
