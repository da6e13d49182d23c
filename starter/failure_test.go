package starter_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("%s = %q, want %q", p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s left behind", p)
		}
	}
}

// TestRollbackRestoresThePreState applies a package whose last step fails:
// every change is undone, files byte-exact with their modes, the platform
// as it was, and the stack record untouched.
func TestRollbackRestoresThePreState(t *testing.T) {
	p := newS1Platform(t)
	h := newHarness(t, harnessOptions{env: map[string]string{"PLATFORM_URL": p.url}})
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "app", "motd"), []byte("old bytes\x00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "app", "motd"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := h.stack("rollback")
	// A first apply that succeeds: a label and a bucket linked to it.
	base := platformKinds + s1Label("label_1") + s1Bucket(true)
	mustStatus(t, h.apply(s.ID, base, starter.StackRun{}), model.ExecCompleted)
	recBefore := h.getStack(s.ID)
	platBefore := p.plat.Snapshot()
	filesBefore := testenv.Tree(t, root)

	failing := platformKinds + s1Label("renamed") + s1Bucket(false) + s1Dashboard(true) + fmt.Sprintf(`---
apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec: {path: %[1]s/app/motd, content: "new\n", mode: "0644"}
---
apiVersion: cairn/v1
kind: Directory
metadata: {name: sub}
spec: {path: %[1]s/app/sub}
---
apiVersion: cairn/v1
kind: File
metadata: {name: inner}
spec: {path: %[1]s/app/sub/inner, content: "x"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: migrate}
spec: {command: "echo failing >&2; exit 3"}
dependsOn: [File/motd, File/inner, Label/lucid_einstein, Dashboard/charmed_saratoba, Bucket/pristine_noir]
`, root)
	e := h.apply(s.ID, failing, starter.StackRun{})
	mustStatus(t, e, model.ExecRolledBack)
	if !strings.Contains(e.Error, "exec/migrate") || !strings.Contains(e.Error, "exited 3") {
		t.Fatalf("error %q does not name the failed step and cause", e.Error)
	}
	if e.Report == nil || !e.Report.RolledBack || e.Report.Failed != 1 || len(e.Report.CompensationFailures) != 0 {
		t.Fatalf("report = %+v", e.Report)
	}
	sameTree(t, testenv.Tree(t, root), filesBefore)
	if after := p.plat.Snapshot(); !jsonEqual(after, platBefore) {
		t.Fatalf("platform after rollback:\n%s\nwant:\n%s", after, platBefore)
	}
	recAfter := h.getStack(s.ID)
	if recordJSON(t, recAfter.Resources) != recordJSON(t, recBefore.Resources) || !recAfter.UpdatedAt.Equal(recBefore.UpdatedAt) {
		t.Fatalf("a rolled-back apply changed the stack record: %s", recordJSON(t, recAfter.Resources))
	}
}

// TestSecondApplyIsRefusedWhileOneRuns checks the stack lock: a second
// apply names the running execution; once it finished, applies run again.
func TestSecondApplyIsRefusedWhileOneRuns(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	s := h.stack("locked")
	slow := fmt.Sprintf(`apiVersion: cairn/v1
kind: Exec
metadata: {name: slow}
spec: {command: "sleep 2; touch %[1]s/done", creates: %[1]s/done}
`, root)
	ctx := context.Background()
	first, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(slow)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(slow)})
	var conflict *starter.ConflictError
	if !errors.As(err, &conflict) || conflict.Running != first.ID {
		t.Fatalf("second apply: %v, want a conflict naming %s", err, first.ID)
	}
	if _, err := h.starter.StartDestroy(ctx, starter.StackRun{StackID: s.ID}); !errors.As(err, &conflict) {
		t.Fatalf("destroy during apply: %v, want a conflict", err)
	}
	// A dry-run takes no lock.
	plan := h.dryRun(s.ID, slow)
	mustStatus(t, plan, model.ExecCompleted)
	done, err := h.starter.Await(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, done, model.ExecCompleted)
	again := h.apply(s.ID, slow, starter.StackRun{})
	mustStatus(t, again, model.ExecCompleted)
	wantReport(t, again.Report, model.Report{Unchanged: 1})
	if again.ID == first.ID || !strings.HasPrefix(again.ID, "stack-"+s.ID+".") {
		t.Fatalf("execution ids %s, %s", first.ID, again.ID)
	}
}

// TestCancelRollsBackAnApply cancels an apply while a step runs: what was
// done is undone and the execution ends cancelled.
func TestCancelRollsBackAnApply(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	s := h.stack("cancel")
	docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: first}
spec: {path: %[1]s/first, content: "1"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: slow}
spec: {command: "sleep 30"}
dependsOn: [File/first]
`, root)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(root, "first")); return err == nil })
	time.Sleep(300 * time.Millisecond)
	if err := h.starter.Cancel(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	done, err := h.starter.Await(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, done, model.ExecCanceled)
	if _, err := os.Stat(filepath.Join(root, "first")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file of a cancelled apply is still there: %v", err)
	}
	if err := h.starter.Cancel(ctx, e.ID); !errors.Is(err, starter.ErrFinished) {
		t.Fatalf("cancel of a finished execution: %v", err)
	}
}

// TestPauseWaitsForAnOperator pauses on a failed step, then retries it
// after the cause was fixed.
func TestPauseWaitsForAnOperator(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	s := h.stack("pause")
	docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: Exec
metadata: {name: needs-flag}
spec: {command: "test -f %[1]s/flag"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: after}
spec: {path: %[1]s/after, content: "done"}
dependsOn: [Exec/needs-flag]
`, root)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs), OnFailure: model.OnFailurePause})
	if err != nil {
		t.Fatal(err)
	}
	var waiting *starter.Execution
	waitFor(t, func() bool {
		waiting, err = h.starter.Describe(ctx, e.ID)
		return err == nil && waiting.Status == model.ExecWaiting
	})
	if _, err := h.starter.Decide(ctx, e.ID, model.DecisionRequest{Action: "explode"}); err == nil || !strings.Contains(err.Error(), "unknown decision") {
		t.Fatalf("bad decision: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := h.starter.Decide(ctx, e.ID, model.DecisionRequest{Action: model.DecisionRetry})
	if err != nil || res.Step != "exec/needs-flag" {
		t.Fatalf("decide: %+v, %v", res, err)
	}
	done, err := h.starter.Await(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, done, model.ExecCompleted)
	if _, err := h.starter.Decide(ctx, e.ID, model.DecisionRequest{Action: model.DecisionSkip}); !errors.Is(err, starter.ErrFinished) && !errors.Is(err, starter.ErrNotWaiting) {
		t.Fatalf("decision on a finished execution: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "after")); string(b) != "done" {
		t.Fatal("the dependent step did not run after the retry")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// workerProcess runs this test binary as a worker in its own process, with
// extra environment ("KEY=value").
func (h *harness) workerProcess(t *testing.T, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerModeEnv+"=1", workerHostEnv+"="+h.dev.HostPort,
		workerDBEnv+"="+h.dbURL, workerQueueEnv+"="+h.queue)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "worker ready" {
				ready <- true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("worker process did not start")
	}
	return cmd
}

// TestKilledWorkerResumesWithoutRepeatingSteps kills the worker process
// with SIGKILL mid-apply and starts another: the apply completes and every
// step ran exactly once.
func TestKilledWorkerResumesWithoutRepeatingSteps(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	root := t.TempDir()
	for _, d := range []string{"counts", "marks"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const n = 12
	var docs strings.Builder
	for i := range n {
		fmt.Fprintf(&docs, `---
apiVersion: cairn/v1
kind: Exec
metadata: {name: step%[2]d}
spec: {command: "sleep 0.4; echo ran >> %[1]s/counts/step%[2]d; touch %[1]s/marks/step%[2]d", creates: %[1]s/marks/step%[2]d}
`, root, i)
	}
	s := h.stack("crash")
	first := h.workerProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs.String()), Parallelism: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Kill the worker once some steps are done and others are running.
	waitFor(t, func() bool {
		entries, _ := os.ReadDir(filepath.Join(root, "marks"))
		return len(entries) >= 3
	})
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	entries, _ := os.ReadDir(filepath.Join(root, "marks"))
	if len(entries) == n {
		t.Fatal("every step finished before the worker was killed")
	}
	h.workerProcess(t)
	done, err := h.starter.Await(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, done, model.ExecCompleted)
	wantReport(t, done.Report, model.Report{Updated: n})
	for i := range n {
		b, err := os.ReadFile(filepath.Join(root, "counts", fmt.Sprintf("step%d", i)))
		if err != nil || string(b) != "ran\n" {
			t.Errorf("step%d ran %q (%v), want exactly once", i, b, err)
		}
	}
	if rec := h.getStack(s.ID); len(rec.Resources) != n {
		t.Fatalf("record has %d resources, want %d", len(rec.Resources), n)
	}
}

// A chain of commands runs as one unit: a worker killed inside it leaves
// the commands that finished recorded, so the retried unit resumes after
// them and runs each exactly once, though none has a guard. The command
// the kill cut off may or may not have done its work: it waits, unknown,
// for the operator's retry, and runs once more only then.
func TestKilledWorkerResumesInsideAUnit(t *testing.T) {
	h := newHarness(t, harnessOptions{noWorker: true})
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "counts"), 0o755))
	const n = 12
	var docs strings.Builder
	for i := range n {
		fmt.Fprintf(&docs, `---
apiVersion: cairn/v1
kind: Exec
metadata: {name: step%[2]d}
spec: {command: "sleep 0.3; echo ran >> %[1]s/counts/step%[2]d"}
`, root, i)
		if i > 0 {
			fmt.Fprintf(&docs, "dependsOn: [Exec/step%d]\n", i-1)
		}
	}
	s := h.stack("crash-unit")
	first := h.workerProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := h.starter.StartApply(ctx, starter.StackRun{StackID: s.ID, SnapshotHash: h.snapshot(docs.String())})
	require.NoError(t, err)
	waitFor(t, func() bool {
		entries, _ := os.ReadDir(filepath.Join(root, "counts"))
		return len(entries) >= 3
	})
	// The kill lands while the fourth command sleeps, well after the third
	// one's outcome was recorded.
	time.Sleep(150 * time.Millisecond)
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	entries, _ := os.ReadDir(filepath.Join(root, "counts"))
	require.Less(t, len(entries), n, "every step finished before the worker was killed")
	h.workerProcess(t)
	// The command cut off (if the kill landed inside one) waits as
	// unknown; the operator retries it.
	decided := 0
	waitForLong(t, func() bool {
		ex, err := h.starter.Describe(ctx, e.ID)
		if err != nil || ex.Status != model.ExecWaiting {
			return err == nil && ex.Finished()
		}
		for _, sp := range ex.Steps {
			if sp.Status == model.StatusUnknown {
				_, err := h.starter.Decide(ctx, e.ID, model.DecisionRequest{Action: model.DecisionRetry, Step: sp.ID})
				require.NoError(t, err)
				decided++
			}
		}
		return false
	})
	assert.LessOrEqual(t, decided, 1, "more than the command cut off was unknown")
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
	wantReport(t, done.Report, model.Report{Updated: n})
	for i := range n {
		b, err := os.ReadFile(filepath.Join(root, "counts", fmt.Sprintf("step%d", i)))
		require.NoError(t, err)
		require.Equal(t, "ran\n", string(b), "step%d ran exactly once", i)
	}
}
