package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
)

// idleRow is what one count of idle agents costs the server and Temporal.
type idleRow struct {
	Agents int
	// Settled: measured once the agents' idle connections to the server
	// closed (agentapi.IdleConnTimeout after their last request); else
	// right after they started polling.
	Settled bool
	// Of cairn server: resident memory, goroutines, established TCP
	// connections (the API's and its own to Temporal).
	CairnKiB   int64
	Goroutines int
	CairnConns int
	// Of the Temporal dev server.
	TemporalKiB   int64
	TemporalConns int
	// Of the agents, all together: resident memory, and the part of it
	// that is each agent's own (RssAnon: its heap and stacks, not the
	// binary's pages, which the agents of one host share).
	AgentsKiB, AgentsAnonKiB int64
}

// runIdleAgents measures what agents cost when they poll and nothing
// runs: a cluster of the largest count's agent nodes, then, for each
// count in ascending order, that many `cairn agent` processes, measured
// right after they all poll and again once their connections to the
// server went idle and closed.
func (r *runner) runIdleAgents(ctx context.Context, counts []int) ([]idleRow, error) {
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	var rows []idleRow
	_, err := r.withEnv(ctx, "idle-agents", func(e *env) ([]row, error) {
		nodes := make([]model.Node, most)
		for i := range nodes {
			nodes[i] = model.Node{ID: fmt.Sprintf("a%d", i+1), Roles: []string{"agent"}, Mode: model.NodeAgent}
		}
		if _, err := e.api.CreateCluster(ctx, model.ClusterInput{ID: "idle", Name: "idle", Nodes: nodes}); err != nil {
			return nil, fmt.Errorf("create cluster: %w", err)
		}
		started := 0
		for _, n := range counts {
			if n > started {
				r.logf("agents: starting %d more cairn agent processes (%d in all)", n-started, n)
				if err := e.startAgents(ctx, r.opts.cairnBin, "idle", nodes[started:n]); err != nil {
					return nil, err
				}
				if err := waitNodes(ctx, e, "idle", nodes[started:n]); err != nil {
					return nil, err
				}
				started = n
			}
			for _, settled := range []bool{false, true} {
				if settled {
					wait := agentapi.IdleConnTimeout + 5*time.Second
					r.logf("agents: %d polling; waiting %s for their idle connections to close", n, wait)
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(wait):
					}
				}
				row, err := e.measureIdle(ctx, n, settled)
				if err != nil {
					return nil, err
				}
				r.logf("  %d agents (settled %v): cairn server %d MiB, %d goroutines, %d connections; Temporal %d MiB, %d connections; agents %d MiB (%d MiB their own)",
					n, settled, row.CairnKiB>>10, row.Goroutines, row.CairnConns, row.TemporalKiB>>10, row.TemporalConns, row.AgentsKiB>>10, row.AgentsAnonKiB>>10)
				rows = append(rows, row)
			}
		}
		return nil, nil
	})
	return rows, err
}

// measureIdle reads the processes' figures now.
func (e *env) measureIdle(ctx context.Context, agents int, settled bool) (idleRow, error) {
	row := idleRow{Agents: agents, Settled: settled}
	metrics, err := e.api.Metrics(ctx)
	if err != nil {
		return row, fmt.Errorf("metrics: %w", err)
	}
	if row.Goroutines, err = promGauge(metrics, "go_goroutines"); err != nil {
		return row, err
	}
	row.CairnKiB, row.TemporalKiB = vmRSS(e.cairn.pid()), vmRSS(e.temporal.pid())
	for _, p := range e.agents {
		row.AgentsKiB += vmRSS(p.pid())
		row.AgentsAnonKiB += procStatusKiB(p.pid(), "RssAnon:")
	}
	if row.CairnConns, err = tcpEstablished(e.cairn.pid()); err != nil {
		return row, err
	}
	if row.TemporalConns, err = tcpEstablished(e.temporal.pid()); err != nil {
		return row, err
	}
	return row, nil
}

// promGauge reads an unlabelled gauge of a Prometheus text exposition.
func promGauge(text []byte, name string) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
			return int(f), nil
		}
	}
	return 0, fmt.Errorf("no %s in the metrics", name)
}

func vmRSS(pid int) int64 { return procStatusKiB(pid, "VmRSS:") }

// tcpEstablished counts the established TCP connections whose sockets
// process pid holds (its descriptors, matched with /proc/net/tcp{,6}).
func tcpEstablished(pid int) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		n += countEstablished(f, inodes)
		f.Close()
	}
	return n, nil
}

// countEstablished counts the rows of a /proc/net/tcp table in state
// ESTABLISHED (01) whose inode is in inodes.
func countEstablished(r io.Reader, inodes map[string]bool) int {
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 9 && f[3] == "01" && inodes[f[9]] {
			n++
		}
	}
	return n
}

// printIdle writes the idle agents' table.
func printIdle(w io.Writer, rows []idleRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(idleHeader, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t")+"\t")
	}
	_ = tw.Flush()
}

var idleHeader = []string{"agents", "when", "cairn RSS MiB", "goroutines", "cairn TCP conns", "temporal RSS MiB", "temporal TCP conns", "agents RSS MiB", "agents anon MiB"}

func (r idleRow) cells() []string {
	when := "just polling"
	if r.Settled {
		when = fmt.Sprintf("idle %s", agentapi.IdleConnTimeout+5*time.Second)
	}
	return []string{fmt.Sprint(r.Agents), when, mib(r.CairnKiB), fmt.Sprint(r.Goroutines), fmt.Sprint(r.CairnConns),
		mib(r.TemporalKiB), fmt.Sprint(r.TemporalConns), mib(r.AgentsKiB), mib(r.AgentsAnonKiB)}
}

// idleMarkdown is the idle agents' table in Markdown.
func idleMarkdown(rows []idleRow) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(idleHeader, " | ") + " |\n|")
	for i := range idleHeader {
		if i < 2 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r.cells(), " | ") + " |\n")
	}
	return b.String()
}
