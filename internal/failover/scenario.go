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
	"github.com/cairn-io/cairn/model"
)

// The apply: files, and a chain of commands that each append one line
// naming the command, the server that ran it and when, so the test sees
// every effect and who made it.
const (
	// Files is how many files the apply writes.
	Files = 400
	// Commands is how many commands its chain runs.
	Commands = 80
)

// ApplyPackage is the apply's document, its files and lines under root.
func ApplyPackage(root string) string {
	var b strings.Builder
	for i := range Files {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: File\nmetadata: {name: f%d}\nspec: {path: %s/files/f%d, content: \"file %d\\n\"}\n", i, root, i, i)
	}
	for i := range Commands {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: e%d}\n"+
			"spec: {command: 'sleep 0.05; echo \"e%d ${TMPDIR##*/} $(date +%%s%%N)\" >> %s/lines'}\n", i, i, root)
		if i > 0 {
			fmt.Fprintf(&b, "dependsOn: [Exec/e%d]\n", i-1)
		}
	}
	return b.String()
}

// Line is one command's effect: which command, the server that ran it
// (its TMPDIR's last element), when.
type Line struct {
	Step   int
	Server string
	At     time.Time
}

// ReadLines reads the lines the commands wrote to path, leaving out one
// being written.
func ReadLines(t *testing.T, path string) []Line {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []Line
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
		out = append(out, Line{Step: step, Server: fields[1], At: time.Unix(0, ns)})
	}
	return out
}

// Run is one apply started on server A, which gets a signal once it
// holds the running chain and B serves too.
type Run struct {
	StopAt  time.Time
	Lines   []Line
	Exec    *model.Execution
	A, B    string
	AExited bool
	// Retried counts the steps left unknown by the stop that the scenario
	// retried (an operator would decide the same).
	Retried int
}

// RunFailover runs the scenario on env: server A alone takes the apply,
// B starts, A gets sig while the chain runs on it, and B carries the apply
// to its end; it returns once the execution finished and checks the files.
func RunFailover(t *testing.T, env Env, sig syscall.Signal) Run {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "target")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "files"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A alone takes the apply: it holds the workflow and the chain.
	a := StartServer(t, env, dir, "srv-a")
	stack, err := a.Client.CreateStack(ctx, model.StackInput{Name: "failover-" + RandomHex(4)})
	require.NoError(t, err)
	started, err := a.Client.Apply(ctx, stack.ID, &client.Document{Data: []byte(ApplyPackage(root)), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	linesPath := filepath.Join(root, "lines")
	waitLines := func(n int) {
		require.Eventually(t, func() bool { return len(ReadLines(t, linesPath)) >= n }, time.Minute, 5*time.Millisecond)
	}
	waitLines(1)
	b := StartServer(t, env, dir, "srv-b")
	// Stop A while the chain runs on it.
	waitLines(len(ReadLines(t, linesPath)) + 2)
	run := Run{StopAt: time.Now(), A: a.Name, B: b.Name}
	require.NoError(t, a.Cmd.Process.Signal(sig))
	require.Less(t, len(ReadLines(t, linesPath)), Commands-5, "the chain ended before the stop: the test proves nothing")

	var done *model.Execution
	require.Eventually(t, func() bool {
		e, err := b.Client.GetExecution(ctx, started.ID)
		if err == nil && e.Status == model.ExecWaiting {
			// The command the stop cut off waits, its outcome unknown.
			if _, err := b.Client.Decide(ctx, started.ID, model.DecisionRequest{Action: model.DecisionRetry}); err == nil {
				run.Retried++
			}
		}
		if err == nil && e.Finished() {
			done = e
		}
		return done != nil
	}, 2*time.Minute, 20*time.Millisecond)
	run.Exec = done
	select {
	case <-a.Exited:
		run.AExited = true
	case <-time.After(30 * time.Second):
	}
	run.Lines = ReadLines(t, linesPath)
	for i := range Files {
		got, err := os.ReadFile(filepath.Join(root, "files", fmt.Sprintf("f%d", i)))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("file %d\n", i), string(got))
	}
	return run
}

// Gap is how long the chain stood still across the stop: from the last
// command finished before it to the first the other server finished.
func (r Run) Gap(t *testing.T) time.Duration {
	t.Helper()
	var before, after time.Time
	for _, l := range r.Lines {
		if !l.At.After(r.StopAt) && l.At.After(before) {
			before = l.At
		}
		if l.Server == r.B && (after.IsZero() || l.At.Before(after)) {
			after = l.At
		}
	}
	require.False(t, before.IsZero(), "no command finished before the stop")
	require.False(t, after.IsZero(), "%s ran no command after %s stopped", r.B, r.A)
	return after.Sub(before)
}

// Counts is how many times each command ran.
func Counts(lines []Line) map[int]int {
	n := map[int]int{}
	for _, l := range lines {
		n[l.Step]++
	}
	return n
}

// RequireCompleted fails t unless e completed with every file created and
// every command run, nothing failed or rolled back.
func RequireCompleted(t *testing.T, e *model.Execution) {
	t.Helper()
	require.Equal(t, model.ExecCompleted, e.Status, "execution %s: %s", e.ID, e.Error)
	require.NotNil(t, e.Report)
	assert.False(t, e.Report.RolledBack, "rolled back")
	assert.Zero(t, e.Report.Failed)
	assert.Equal(t, Files, e.Report.Created)
	assert.Equal(t, Commands, e.Report.Updated)
}

// RandomHex is n random bytes in hex, for names of a run's own.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
