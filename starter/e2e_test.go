package starter_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

func TestMain(m *testing.M) {
	if os.Getenv(workerModeEnv) != "" {
		os.Exit(runWorkerProcess())
	}
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// harness is one test's Cairn: a store in a temp dir, a worker on its own
// task queue of the shared dev server, and a starter.
type harness struct {
	t       *testing.T
	dev     *testenv.DevServer
	dir     string
	dbURL   string
	queue   string
	store   store.Store
	starter *starter.Starter
	worker  sdkworker.Worker
	env     map[string]string
	secrets *expr.Secrets
}

type harnessOptions struct {
	noWorker bool
	env      map[string]string
	secrets  map[string]string
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	dev := testenv.Temporal(t)
	dir := t.TempDir()
	h := &harness{t: t, dev: dev, dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "cairn.db"), env: o.env,
		secrets: expr.NewSecrets(o.secrets, nil)}
	ctx := context.Background()
	st, err := store.Open(ctx, h.dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h.store = st
	h.queue = "cairn-test-" + randomHex(6)
	h.starter = starter.New(dev.Client, starter.Config{
		TaskQueue: h.queue, Store: st, HeartbeatTimeout: 2 * time.Second, NodeWait: 5 * time.Second,
	})
	require.NoError(t, h.starter.EnsureSearchAttributes(ctx))
	if !o.noWorker {
		h.startWorker()
	}
	return h
}

func (h *harness) lookupEnv(k string) (string, bool) {
	v, ok := h.env[k]
	return v, ok
}

func (h *harness) startWorker() {
	h.t.Helper()
	w, err := worker.New(h.dev.Client, worker.Deps{Store: h.store, Env: h.lookupEnv, Secrets: h.secrets, Logger: testLogger()}, worker.Options{TaskQueue: h.queue})
	require.NoError(h.t, err)
	require.NoError(h.t, w.Start())
	h.worker = w
	h.t.Cleanup(w.Stop)
}

func testLogger() *slog.Logger {
	if os.Getenv("CAIRN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (h *harness) stack(name string) *model.Stack {
	h.t.Helper()
	s := &model.Stack{Name: name, URLs: []string{}}
	require.NoError(h.t, h.store.CreateStack(context.Background(), s))
	return s
}

func (h *harness) snapshot(docs string) string {
	h.t.Helper()
	content, err := prepare.EncodePackageSnapshot(prepare.SnapshotSource{Name: "package.yaml", Format: "yaml", Data: docs})
	require.NoError(h.t, err)
	hash, err := h.store.PutSnapshot(context.Background(), "package", content)
	require.NoError(h.t, err)
	return hash
}

// apply runs an apply to the end and returns the described execution.
func (h *harness) apply(stackID, docs string, run starter.StackRun) *starter.Execution {
	h.t.Helper()
	return h.applyRun(stackID, docs, run, 2*time.Minute)
}

// applyWithin is apply with its default settings and a longer wait.
func (h *harness) applyWithin(stackID, docs string, wait time.Duration) *starter.Execution {
	h.t.Helper()
	return h.applyRun(stackID, docs, starter.StackRun{}, wait)
}

func (h *harness) applyRun(stackID, docs string, run starter.StackRun, wait time.Duration) *starter.Execution {
	h.t.Helper()
	run.StackID, run.SnapshotHash = stackID, h.snapshot(docs)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	e, err := h.starter.StartApply(ctx, run)
	require.NoError(h.t, err)
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(h.t, err)
	return done
}

func (h *harness) dryRun(stackID, docs string) *starter.Execution {
	h.t.Helper()
	return h.dryRunWith(stackID, docs, starter.StackRun{})
}

// dryRunWith is dryRun with run's options.
func (h *harness) dryRunWith(stackID, docs string, run starter.StackRun) *starter.Execution {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run.StackID, run.SnapshotHash = stackID, h.snapshot(docs)
	e, err := h.starter.StartDryRun(ctx, run)
	require.NoError(h.t, err)
	done, err := h.starter.Await(ctx, e.ID)
	require.NoError(h.t, err)
	return done
}

func (h *harness) getStack(id string) *model.Stack {
	h.t.Helper()
	s, err := h.store.GetStack(context.Background(), id)
	require.NoError(h.t, err)
	return s
}

func mustStatus(t *testing.T, e *starter.Execution, want model.ExecutionStatus) {
	t.Helper()
	require.Equal(t, want, e.Status, "execution %s status = %s (error %q), want %s", e.ID, e.Status, e.Error, want)
}

func wantReport(t *testing.T, got *model.Report, want model.Report) {
	t.Helper()
	require.NotNil(t, got, "no report, want %+v", want)
	counts := func(r model.Report) [7]int {
		rb := 0
		if r.RolledBack {
			rb = 1
		}
		return [7]int{r.Created, r.Updated, r.Deleted, r.Unchanged, r.Failed, r.Skipped, rb}
	}
	require.Equal(t, counts(want), counts(*got), "report = %+v, want %+v (failures %+v)", *got, want, got.Failures)
}

func filesPackage(dir string, motd string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: Directory
metadata: {name: app}
spec: {path: %[1]s/app, mode: "0750"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec: {path: %[1]s/app/motd, content: %[2]q, mode: "0640"}
---
apiVersion: cairn/v1
kind: File
metadata: {name: conf}
spec: {path: %[1]s/app/app.conf, content: "port = 80\n"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: reload}
spec: {command: "echo run >> %[1]s/reloads && touch %[1]s/reloaded", creates: %[1]s/reloaded}
dependsOn: [File/motd, File/conf]
`, dir, motd)
}

func TestApplyFilesThenReapplyAsNoop(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	s := h.stack("files")

	first := h.apply(s.ID, filesPackage(root, "hello\n"), starter.StackRun{})
	mustStatus(t, first, model.ExecCompleted)
	wantReport(t, first.Report, model.Report{Created: 3, Updated: 1})
	b, err := os.ReadFile(filepath.Join(root, "app", "motd"))
	require.NoError(t, err, "motd = %q, %v", b, err)
	require.Equal(t, "hello\n", string(b), "motd = %q, %v", b, err)
	fi, err := os.Stat(filepath.Join(root, "app", "motd"))
	require.NoError(t, err, "motd mode = %v, %v", fi.Mode(), err)
	require.Equal(t, fs.FileMode(0o640), fi.Mode().Perm(), "motd mode = %v, %v", fi.Mode(), err)
	rec := h.getStack(s.ID)
	require.Len(t, rec.Resources, 4, "record")
	require.True(t, strings.EqualFold(rec.Resources[1].Kind, "file"), "record = %+v", rec.Resources)
	require.Equal(t, filepath.Join(root, "app", "motd"), rec.Resources[1].ID, "record = %+v", rec.Resources)
	require.Len(t, first.Steps, 4, "steps")

	again := h.apply(s.ID, filesPackage(root, "hello\n"), starter.StackRun{})
	mustStatus(t, again, model.ExecCompleted)
	wantReport(t, again.Report, model.Report{Unchanged: 4})
	after := h.getStack(s.ID)
	require.True(t, after.UpdatedAt.Equal(rec.UpdatedAt), "updatedAt moved on a noop apply: %v → %v", rec.UpdatedAt, after.UpdatedAt)
	b, _ = os.ReadFile(filepath.Join(root, "reloads"))
	require.Equal(t, "run\n", string(b), "reload ran %q", b)

	plan := h.dryRun(s.ID, filesPackage(root, "changed\n"))
	mustStatus(t, plan, model.ExecCompleted)
	require.NotNil(t, plan.Plan, "plan = %+v", plan.Plan)
	require.Equal(t, 1, plan.Plan.Summary.Update, "plan = %+v", plan.Plan)
	require.Equal(t, 3, plan.Plan.Summary.Noop, "plan = %+v", plan.Plan)
	require.Len(t, plan.Plan.Steps, 4, "plan = %+v", plan.Plan)
	b, _ = os.ReadFile(filepath.Join(root, "app", "motd"))
	require.Equal(t, "hello\n", string(b), "a dry-run changed a file")
	var motd model.PlanStep
	for _, ps := range plan.Plan.Steps {
		if ps.Name == "motd" {
			motd = ps
		}
	}
	require.Equal(t, model.ActionUpdate, motd.Action, "motd plan = %+v", motd)
	require.NotEmpty(t, motd.Changes, "motd plan = %+v", motd)
}

// platform snapshot helpers used by several tests.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
