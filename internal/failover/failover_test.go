package failover

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// The apply: files, and a chain of commands that each append one line
// naming the command, the server that ran it and when, so the test sees
// every effect and who made it.
const (
	files    = 400
	commands = 80
)

func applyPackage(root string) string {
	var b strings.Builder
	for i := range files {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: File\nmetadata: {name: f%d}\nspec: {path: %s/files/f%d, content: \"file %d\\n\"}\n", i, root, i, i)
	}
	for i := range commands {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: e%d}\n"+
			"spec: {command: 'sleep 0.05; echo \"e%d ${TMPDIR##*/} $(date +%%s%%N)\" >> %s/lines'}\n", i, i, root)
		if i > 0 {
			fmt.Fprintf(&b, "dependsOn: [Exec/e%d]\n", i-1)
		}
	}
	return b.String()
}

// line is one command's effect.
type line struct {
	step   int
	server string
	at     time.Time
}

func readLines(t *testing.T, path string) []line {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue // a line being written
		}
		step, err1 := strconv.Atoi(strings.TrimPrefix(fields[0], "e"))
		ns, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, line{step: step, server: fields[1], at: time.Unix(0, ns)})
	}
	return out
}

// failoverRun is one apply started on server A, which gets sig once it
// holds the running chain and B serves too.
type failoverRun struct {
	stopAt  time.Time
	lines   []line
	exec    *model.Execution
	a, b    string
	aExited bool
	// retried counts the steps left unknown by the stop that the test
	// retried (an operator would decide the same).
	retried int
}

func runFailover(t *testing.T, env serverEnv, sig syscall.Signal) failoverRun {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "target")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "files"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A alone takes the apply: it holds the workflow and the chain.
	a := startServer(t, env, dir, "srv-a")
	stack, err := a.client.CreateStack(ctx, model.StackInput{Name: "failover-" + randomHex(4)})
	require.NoError(t, err)
	started, err := a.client.Apply(ctx, stack.ID, &client.Document{Data: []byte(applyPackage(root)), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	linesPath := filepath.Join(root, "lines")
	waitLines := func(n int) {
		require.Eventually(t, func() bool { return len(readLines(t, linesPath)) >= n }, time.Minute, 5*time.Millisecond)
	}
	waitLines(1)
	b := startServer(t, env, dir, "srv-b")
	// Stop A while the chain runs on it.
	waitLines(len(readLines(t, linesPath)) + 2)
	run := failoverRun{stopAt: time.Now(), a: a.name, b: b.name}
	require.NoError(t, a.cmd.Process.Signal(sig))
	require.Less(t, len(readLines(t, linesPath)), commands-5, "the chain ended before the stop: the test proves nothing")

	var done *model.Execution
	require.Eventually(t, func() bool {
		e, err := b.client.GetExecution(ctx, started.ID)
		if err == nil && e.Status == model.ExecWaiting {
			// The command the stop cut off waits, its outcome unknown.
			if _, err := b.client.Decide(ctx, started.ID, model.DecisionRequest{Action: model.DecisionRetry}); err == nil {
				run.retried++
			}
		}
		if err == nil && e.Finished() {
			done = e
		}
		return done != nil
	}, 2*time.Minute, 20*time.Millisecond)
	run.exec = done
	select {
	case <-a.exited:
		run.aExited = true
	case <-time.After(30 * time.Second):
	}
	run.lines = readLines(t, linesPath)
	for i := range files {
		got, err := os.ReadFile(filepath.Join(root, "files", fmt.Sprintf("f%d", i)))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("file %d\n", i), string(got))
	}
	return run
}

// gap is how long the chain stood still across the stop: from the last
// command finished before it to the first the other server finished.
func (r failoverRun) gap(t *testing.T) time.Duration {
	t.Helper()
	var before, after time.Time
	for _, l := range r.lines {
		if !l.at.After(r.stopAt) && l.at.After(before) {
			before = l.at
		}
		if l.server == r.b && (after.IsZero() || l.at.Before(after)) {
			after = l.at
		}
	}
	require.False(t, before.IsZero(), "no command finished before the stop")
	require.False(t, after.IsZero(), "%s ran no command after %s stopped", r.b, r.a)
	return after.Sub(before)
}

func counts(lines []line) map[int]int {
	n := map[int]int{}
	for _, l := range lines {
		n[l.step]++
	}
	return n
}

func requireCompleted(t *testing.T, e *model.Execution) {
	t.Helper()
	require.Equal(t, model.ExecCompleted, e.Status, "execution %s: %s", e.ID, e.Error)
	require.NotNil(t, e.Report)
	assert.False(t, e.Report.RolledBack, "rolled back")
	assert.Zero(t, e.Report.Failed)
	assert.Equal(t, files, e.Report.Created)
	assert.Equal(t, commands, e.Report.Updated)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newEnv(t *testing.T, bin string) serverEnv {
	t.Helper()
	dev := testenv.Temporal(t)
	return serverEnv{bin: bin, temporal: dev.HostPort, database: testenv.FreshPostgres(t), queue: "failover-" + randomHex(5)}
}

// TestStoppedServerHandsOverInSeconds stops the server running an apply
// with SIGTERM, as a rolling upgrade does, several times to catch a race:
// the server stops polling, lets the command in flight finish, hands the
// rest back, and the other server carries the apply to the end within 2 s:
// never rolled back, every command run once, no attempt counted.
func TestStoppedServerHandsOverInSeconds(t *testing.T) {
	bin := testenv.BuildCairn(t)
	for i := range 5 {
		t.Run(fmt.Sprintf("run-%d", i+1), func(t *testing.T) {
			r := runFailover(t, newEnv(t, bin), syscall.SIGTERM)
			requireCompleted(t, r.exec)
			assert.Zero(t, r.retried, "a command the drain let finish was left unknown")
			for step := range commands {
				assert.Equal(t, 1, counts(r.lines)[step], "command e%d ran %d times", step, counts(r.lines)[step])
			}
			gap := r.gap(t)
			t.Logf("the chain stood still %s across the stop", gap)
			assert.Less(t, gap, 2*time.Second)
			assert.True(t, r.aExited, "the stopped server did not exit within its drain")
			seen := 0
			for _, s := range r.exec.Steps {
				if strings.HasPrefix(s.ID, "exec/") {
					seen++
					assert.Equal(t, 1, s.Attempts, "step %s: a handover counted as an attempt", s.ID)
				}
			}
			assert.Equal(t, commands, seen, "the execution lists every command")
		})
	}
}

// TestKilledServerIsReplacedInSeconds kills the server running an apply
// with SIGKILL: the other server carries on within 10 s (the heartbeat
// timeout and a retry), without a rollback. The command the kill cut off
// (it has no guard) waits, unknown, for a decision, and runs again once
// retried; every other runs once.
func TestKilledServerIsReplacedInSeconds(t *testing.T) {
	r := runFailover(t, newEnv(t, testenv.BuildCairn(t)), syscall.SIGKILL)
	requireCompleted(t, r.exec)
	twice := 0
	for step := range commands {
		n := counts(r.lines)[step]
		require.GreaterOrEqual(t, n, 1, "command e%d never ran", step)
		require.LessOrEqual(t, n, 2, "command e%d ran %d times", step, n)
		if n == 2 {
			twice++
		}
	}
	assert.LessOrEqual(t, twice, 1, "more than the command cut off ran twice")
	assert.LessOrEqual(t, r.retried, 1, "more than the command cut off was unknown")
	gap := r.gap(t)
	t.Logf("the chain stood still %s across the kill", gap)
	assert.Less(t, gap, 10*time.Second)
}
