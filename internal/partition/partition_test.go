package partition

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cairnclient "github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// The stack: three commands on the node, one after the other; the middle
// one runs for 10 s, ticking four times a second, and ignores SIGTERM (as
// a command busy cleaning up would), so only SIGKILL stops it. Every command appends
// what it does to one file, with the namespace (the host) and the shell's
// pid (the run) it ran in and when, so the test sees each run of each
// step, where it ran and when it stopped.
const (
	slowTicks = 40
	tickEvery = 250 * time.Millisecond
)

func stackPackage(ipBin, events string) string {
	mark := func(what string) string {
		return fmt.Sprintf(`echo "%s $(%s netns identify) $$ $(date +%%s%%N)" >> %s`, what, ipBin, events)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: first}\ntarget: {roles: [web]}\nspec: {command: '%s; %s'}\n",
		mark("start first"), mark("done first"))
	// The slow step is declared safe to repeat, so its retry runs it again
	// (one that is not would wait, unknown, for a decision: see
	// starter/unknown_test.go).
	fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: slow}\ntarget: {roles: [web]}\ndependsOn: [Exec/first]\nmeta: {idempotent: true}\n"+
		"spec: {command: 'trap \"\" TERM; %s; i=0; while [ $i -lt %d ]; do %s; sleep %s; i=$((i+1)); done; %s'}\n",
		mark("start slow"), slowTicks, mark("tick slow"), strconv.FormatFloat(tickEvery.Seconds(), 'f', -1, 64), mark("done slow"))
	fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: last}\ntarget: {roles: [web]}\ndependsOn: [Exec/slow]\nspec: {command: '%s; %s'}\n",
		mark("start last"), mark("done last"))
	return b.String()
}

// event is one line a command appended.
type event struct {
	what, step, host string
	pid              int
	at               time.Time
}

func readEvents(t *testing.T, path string) []event {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			continue // a line being written
		}
		pid, err1 := strconv.Atoi(fields[3])
		ns, err2 := strconv.ParseInt(fields[4], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, event{what: fields[0], step: fields[1], host: fields[2], pid: pid, at: time.Unix(0, ns)})
	}
	return out
}

// run is one run of a step: its start and its last sign of life.
type run struct {
	host       string
	pid        int
	start, end time.Time
	done       bool
}

// runsOf lists the runs of step, in the order they started.
func runsOf(events []event, step string) []*run {
	var runs []*run
	byPid := map[int]*run{}
	for _, e := range events {
		if e.step != step {
			continue
		}
		r := byPid[e.pid]
		if r == nil {
			r = &run{host: e.host, pid: e.pid, start: e.at}
			byPid[e.pid] = r
			runs = append(runs, r)
		}
		r.end = e.at
		r.done = r.done || e.what == "done"
	}
	return runs
}

// A node's host cut off from Temporal and the server in the middle of a
// step, for longer than the heartbeat timeout (5 s), then healed: its
// agent kills the command and records nothing (the attempt is fenced off,
// see liveness.Fence) before Temporal times the attempt out, so the step
// never runs in two places at once; the step is handed to the node's other
// agent when it has one, or waits for its own to come back; the execution
// completes and every command completes once.
func TestPartitionedAgent(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	ipBin, err := exec.LookPath("ip")
	require.NoError(t, err)
	bin := testenv.BuildCairn(t)
	temporal := startTemporal(t, n)
	srv := startServer(t, bin, temporal, n)
	for _, tc := range []struct {
		name   string
		agents int
	}{
		{name: "handed over to the node's other agent", agents: 2},
		{name: "waits for its agent to come back", agents: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cluster := fmt.Sprintf("part-%s-%d", n.id, tc.agents)
			_, err := srv.Client.CreateCluster(ctx, model.ClusterInput{ID: cluster, Name: cluster,
				Nodes: []model.Node{{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent}}})
			require.NoError(t, err)
			tok, err := srv.Client.IssueNodeToken(ctx, cluster, "web-1")
			require.NoError(t, err)
			hosts := map[string]*host{}
			agents := map[string]*proc{}
			for i := range tc.agents {
				h := n.addHost(t, fmt.Sprintf("%d%c", tc.agents, 'a'+i))
				hosts[h.Name] = h
				agents[h.Name] = startAgent(t, bin, temporal, srv, h, cluster, "web-1", tok.Token)
			}

			events := filepath.Join(t.TempDir(), "events")
			stack, err := srv.Client.CreateStack(ctx, model.StackInput{Name: cluster})
			require.NoError(t, err)
			started, err := srv.Client.Apply(ctx, stack.ID, &cairnclient.Document{Data: []byte(stackPackage(ipBin, events)), Format: "yaml"},
				cairnclient.ApplyOptions{Cluster: cluster})
			require.NoError(t, err)

			// Cut the slow step's host off once it has ticked twice.
			var first *run
			require.Eventually(t, func() bool {
				runs := runsOf(readEvents(t, events), "slow")
				if len(runs) > 0 && runs[0].end.Sub(runs[0].start) >= 2*tickEvery {
					first = runs[0]
				}
				return first != nil
			}, time.Minute, 20*time.Millisecond, "the slow step did not start")
			cutOff := hosts[first.host]
			require.NotNil(t, cutOff, "the slow step ran on %q, not on an agent's host", first.host)
			cutAt := time.Now()
			cutOff.cut()
			t.Logf("cut %s off %s after the slow step started there", first.host, cutAt.Sub(first.start).Round(time.Millisecond))

			var healAt time.Time
			if tc.agents > 1 {
				// The other agent takes the step while this one is cut off.
				require.Eventually(t, func() bool {
					runs := runsOf(readEvents(t, events), "slow")
					return len(runs) > 1 && runs[1].host != first.host
				}, 90*time.Second, 50*time.Millisecond, "the step was not handed over to the other agent")
				e, err := srv.Client.Wait(ctx, started.ID, 100*time.Millisecond)
				require.NoError(t, err)
				require.Equal(t, model.ExecCompleted, e.Status, "while cut off: %s", e.Error)
				healAt = time.Now()
				cutOff.heal()
			} else {
				// Cut off for twice the heartbeat timeout.
				time.Sleep(2 * workflows.DefaultHeartbeat)
				healAt = time.Now()
				cutOff.heal()
			}
			e, err := srv.Client.Wait(ctx, started.ID, 100*time.Millisecond)
			require.NoError(t, err)
			require.Equal(t, model.ExecCompleted, e.Status, "execution %s: %s", e.ID, e.Error)
			require.NotNil(t, e.Report)
			assert.Zero(t, e.Report.Failed, "failed steps")
			assert.False(t, e.Report.RolledBack, "rolled back")

			all := readEvents(t, events)
			for _, step := range []string{"first", "last"} {
				runs := runsOf(all, step)
				require.Len(t, runs, 1, "runs of %s", step)
				assert.True(t, runs[0].done, "%s did not finish", step)
			}
			runs := runsOf(all, "slow")
			require.Len(t, runs, 2, "runs of the slow step: the one cut off and its retry")
			cut, retry := runs[0], runs[1]
			assert.False(t, cut.done, "the run cut off ran to its end")
			assert.True(t, retry.done, "the retry did not finish")
			// The cut-off run stopped on its own, before anyone could
			// reach its host, and before the retry started anywhere.
			assert.True(t, cut.end.Before(healAt), "the cut-off run went on until its host was healed (last sign %s after the cut)", cut.end.Sub(cutAt))
			assert.True(t, cut.end.Before(retry.start), "the two runs overlapped: the cut-off run's last tick %s, the retry's start %s",
				cut.end.Format(time.StampMilli), retry.start.Format(time.StampMilli))
			if tc.agents > 1 {
				assert.NotEqual(t, cut.host, retry.host, "the retry ran on the cut-off host")
			} else {
				assert.True(t, retry.start.After(healAt), "the retry started before the host was healed")
			}
			t.Logf("cut-off run stopped %s after the cut (fence: %s without an acknowledged heartbeat); retry started %s after the cut, on %s",
				cut.end.Sub(cutAt).Round(10*time.Millisecond), liveness.FenceAfter(workflows.DefaultHeartbeat),
				retry.start.Sub(cutAt).Round(10*time.Millisecond), retry.host)
			for name, a := range agents {
				assert.True(t, a.alive(), "agent on %s exited", name)
				if name == cut.host {
					t.Logf("what the cut-off agent said:\n%s", relevant(a.logText()))
				}
			}
		})
	}
}

// relevant is the lines of an agent's log about its attempts being fenced
// off, handed back or losing contact.
func relevant(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "fenced") || strings.Contains(l, "handed back") || strings.Contains(l, "Heartbeat") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
