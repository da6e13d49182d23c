package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

func slowPackage(root string) string {
	return fmt.Sprintf(`kind: Exec
metadata: {name: slow}
spec: {command: "sleep 2; touch %[1]s/done", creates: %[1]s/done}
`, root)
}

// TestE2EConcurrentApplyIsRefused checks the stack lock over HTTP: a second
// apply (and a destroy) while one runs answers 409 naming the running
// execution; a dry-run takes no lock; once the first is done applies run
// again.
func TestE2EConcurrentApplyIsRefused(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	root := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "locked"})
	if err != nil {
		t.Fatal(err)
	}
	doc := &client.Document{Data: []byte(slowPackage(root)), Format: "yaml"}
	first, err := h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != model.ExecRunning || first.ID == "" || strings.Contains(first.ID, "/") {
		t.Fatalf("started %+v", first)
	}
	_, err = h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Running != first.ID || !strings.Contains(apiErr.Message, first.ID) {
		t.Fatalf("second apply: %v, want 409 naming %s", err, first.ID)
	}
	if _, err := h.client.DeleteStack(ctx, st.ID, client.DeleteOptions{}); !client.IsStatus(err, http.StatusConflict) {
		t.Fatalf("delete during apply: %v", err)
	}
	plan, _, err := h.client.DryRun(ctx, st.ID, doc, client.DryRunOptions{})
	if err != nil || plan.Summary.Run+plan.Summary.Create+plan.Summary.Update != 1 {
		t.Fatalf("dry-run during apply: %+v %v", plan, err)
	}
	done, err := h.client.Wait(ctx, first.ID, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, done, model.ExecCompleted)
	again := h.applyWait(st.ID, slowPackage(root), client.ApplyOptions{})
	mustStatus(t, again, model.ExecCompleted)
	wantReport(t, again.Report, model.Report{Unchanged: 1})
}

// TestE2EExecutionRoutes drives an execution through every execution
// route: describe (steps, report, UI link), list with filters, the event
// stream, retry (409 for a completed one, a linked new execution for a
// failed one), cancel, and decisions on a paused execution.
func TestE2EExecutionRoutes(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	root := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "routes"})
	if err != nil {
		t.Fatal(err)
	}
	pkg := fmt.Sprintf(`kind: Directory
metadata: {name: d}
spec: {path: %[1]s/d}
---
kind: File
metadata: {name: f}
spec: {path: %[1]s/d/f, content: "x"}
`, root)

	t.Run("describe", func(t *testing.T) {
		ex := h.applyWait(st.ID, pkg, client.ApplyOptions{})
		mustStatus(t, ex, model.ExecCompleted)
		got, err := h.client.GetExecution(ctx, ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != model.ExecApply || got.StackID != st.ID || got.Report == nil || got.Report.Created != 2 || got.ClosedAt == nil {
			t.Fatalf("execution %+v", got)
		}
		if len(got.Steps) != 2 {
			t.Fatalf("steps %+v", got.Steps)
		}
		for _, s := range got.Steps {
			if s.ID == "" || s.Status != model.StatusSucceeded || s.Action != model.ActionCreate || s.Attempts < 1 {
				t.Fatalf("step %+v", s)
			}
		}
		want := testUIURL + "/namespaces/default/workflows/" + got.WorkflowID + "/" + got.RunID
		if got.UIURL != want || got.Progress == nil || got.Progress.Total != 2 || got.Progress.Done != 2 {
			t.Fatalf("ui %q (want %q), progress %+v", got.UIURL, want, got.Progress)
		}
		if _, err := h.client.GetExecution(ctx, "stack-nope.00000000-0000-0000-0000-000000000000"); !client.IsStatus(err, http.StatusNotFound) {
			t.Fatalf("unknown execution: %v", err)
		}
		if _, err := h.client.Retry(ctx, ex.ID); !client.IsStatus(err, http.StatusConflict) {
			t.Fatalf("retry of a completed execution: %v", err)
		}
		if _, err := h.client.Cancel(ctx, ex.ID); !client.IsStatus(err, http.StatusConflict) {
			t.Fatalf("cancel of a completed execution: %v", err)
		}
		if _, err := h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionSkip}); !client.IsStatus(err, http.StatusConflict) {
			t.Fatalf("decision on a completed execution: %v", err)
		}
	})

	t.Run("list", func(t *testing.T) {
		waitUntil(t, "visibility lists the apply", func() bool {
			l, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Stack: st.ID, Kind: model.ExecApply, Status: model.ExecCompleted})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			return len(l.Executions) == 1 && l.Executions[0].StackID == st.ID && l.Executions[0].Kind == model.ExecApply
		})
		l, err := h.client.ListExecutions(ctx, client.ExecutionFilter{Stack: st.ID, Kind: model.ExecDestroy})
		if err != nil || len(l.Executions) != 0 {
			t.Fatalf("destroys of the stack: %+v %v", l, err)
		}
		for _, bad := range []string{"status=sleeping", "type=upgrade", "limit=0", "pageToken=%25%25"} {
			r := (&testServer{t: t, URL: h.url, Token: h.token}).do(http.MethodGet, "/v1/executions?"+bad, nil)
			r.expect(t, http.StatusBadRequest)
		}
	})

	t.Run("events", func(t *testing.T) {
		ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg + fmt.Sprintf(`---
kind: Exec
metadata: {name: wait}
spec: {command: "sleep 1; touch %[1]s/waited", creates: %[1]s/waited}
dependsOn: [File/f]
`, root)), Format: "yaml"}, client.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		steps := map[string]model.Status{}
		var final *model.Execution
		err = h.client.Events(ctx, ex.ID, func(ev client.Event) error {
			types = append(types, ev.Type)
			switch ev.Type {
			case client.EventStep:
				steps[ev.Step.ID] = ev.Step.Status
			case client.EventDone:
				final = ev.Execution
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if types[0] != client.EventStatus || types[len(types)-1] != client.EventDone || final == nil || final.Status != model.ExecCompleted {
			t.Fatalf("events %v, final %+v", types, final)
		}
		if len(steps) != 3 || steps["exec/wait"] != model.StatusSucceeded {
			t.Fatalf("step events %v", steps)
		}
		// A finished execution streams its state and ends at once.
		var again []string
		if err := h.client.Events(ctx, ex.ID, func(ev client.Event) error { again = append(again, ev.Type); return nil }); err != nil {
			t.Fatal(err)
		}
		if again[len(again)-1] != client.EventDone {
			t.Fatalf("events of a finished execution %v", again)
		}
		if err := h.client.Events(ctx, "nope", func(client.Event) error { return nil }); !client.IsStatus(err, http.StatusNotFound) {
			t.Fatalf("events of an unknown execution: %v", err)
		}
	})

	t.Run("events heartbeat and client leaving", func(t *testing.T) {
		other, err := h.client.CreateStack(ctx, model.StackInput{Name: "heartbeat"})
		if err != nil {
			t.Fatal(err)
		}
		slow := fmt.Sprintf("kind: Exec\nmetadata: {name: slow}\nspec: {command: \"sleep 4; touch %[1]s/hb\", creates: %[1]s/hb}\n", root)
		ex, err := h.client.Apply(ctx, other.ID, &client.Document{Data: []byte(slow), Format: "yaml"}, client.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, h.url+"/v1/executions/"+ex.ID+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+h.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("stream answer %d %v", resp.StatusCode, resp.Header)
		}
		sc := bufio.NewScanner(resp.Body)
		sawStatus, sawBeat := false, false
		for sc.Scan() && !(sawStatus && sawBeat) {
			sawStatus = sawStatus || sc.Text() == "event: status"
			sawBeat = sawBeat || sc.Text() == ": heartbeat"
		}
		if !sawStatus || !sawBeat {
			t.Fatalf("status %v heartbeat %v", sawStatus, sawBeat)
		}
		// The client goes away mid-execution: the server's stream ends
		// (and is logged as a finished request) without waiting for it.
		const finished = `"route":"/v1/executions/:id/events","status":200`
		before := strings.Count(h.logs.String(), finished)
		cancel()
		_ = resp.Body.Close()
		waitUntil(t, "the stream handler returns", func() bool {
			return strings.Count(h.logs.String(), finished) > before
		})
		if got, err := h.client.GetExecution(ctx, ex.ID); err != nil || got.Finished() {
			t.Fatalf("the stream ended because the execution did: %+v %v", got, err)
		}
		if _, err := h.client.Wait(ctx, ex.ID, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("retry a failed execution", func(t *testing.T) {
		flag := filepath.Join(root, "flag")
		failing := fmt.Sprintf("kind: Exec\nmetadata: {name: needs-flag}\nspec: {command: \"test -f %s\"}\n", flag)
		other, err := h.client.CreateStack(ctx, model.StackInput{Name: "retry"})
		if err != nil {
			t.Fatal(err)
		}
		ex := h.applyWait(other.ID, failing, client.ApplyOptions{})
		if ex.Status != model.ExecFailed && ex.Status != model.ExecRolledBack {
			t.Fatalf("status %s", ex.Status)
		}
		if err := os.WriteFile(flag, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		retried, err := h.client.Retry(ctx, ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		done, err := h.client.Wait(ctx, retried.ID, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, done, model.ExecCompleted)
		if done.RetryOf != ex.ID || done.ID == ex.ID {
			t.Fatalf("retry %s of %s: retryOf %q", done.ID, ex.ID, done.RetryOf)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		other, err := h.client.CreateStack(ctx, model.StackInput{Name: "cancel"})
		if err != nil {
			t.Fatal(err)
		}
		first := filepath.Join(root, "cancel-first")
		docs := fmt.Sprintf("kind: File\nmetadata: {name: first}\nspec: {path: %s, content: \"1\"}\n---\nkind: Exec\nmetadata: {name: slow}\nspec: {command: \"sleep 30\"}\ndependsOn: [File/first]\n", first)
		ex, err := h.client.Apply(ctx, other.ID, &client.Document{Data: []byte(docs), Format: "yaml"}, client.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "first file", func() bool { _, err := os.Stat(first); return err == nil })
		time.Sleep(300 * time.Millisecond)
		if _, err := h.client.Cancel(ctx, ex.ID); err != nil {
			t.Fatal(err)
		}
		done, err := h.client.Wait(ctx, ex.ID, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, done, model.ExecCanceled)
		if _, err := os.Stat(first); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a cancelled apply left its file: %v", err)
		}
	})

	t.Run("decisions", func(t *testing.T) {
		other, err := h.client.CreateStack(ctx, model.StackInput{Name: "pause"})
		if err != nil {
			t.Fatal(err)
		}
		flag := filepath.Join(root, "pause-flag")
		docs := fmt.Sprintf("kind: Exec\nmetadata: {name: needs-flag}\nspec: {command: \"test -f %[1]s\"}\n---\nkind: File\nmetadata: {name: after}\nspec: {path: %[1]s.after, content: done}\ndependsOn: [Exec/needs-flag]\n", flag)
		ex, err := h.client.Apply(ctx, other.ID, &client.Document{Data: []byte(docs), Format: "yaml"}, client.ApplyOptions{OnFailure: model.OnFailurePause})
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the execution waits", func() bool {
			got, err := h.client.GetExecution(ctx, ex.ID)
			return err == nil && got.Status == model.ExecWaiting && got.Progress != nil && len(got.Progress.Waiting) == 1
		})
		if _, err := h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: "explode"}); !client.IsStatus(err, http.StatusBadRequest) {
			t.Fatalf("bad action: %v", err)
		}
		if err := os.WriteFile(flag, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionRetry})
		if err != nil || res.Step != "exec/needs-flag" || res.Action != model.DecisionRetry {
			t.Fatalf("decide: %+v %v", res, err)
		}
		done, err := h.client.Wait(ctx, ex.ID, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		mustStatus(t, done, model.ExecCompleted)
		if _, err := h.client.Decide(ctx, ex.ID, model.DecisionRequest{Action: model.DecisionSkip}); !client.IsStatus(err, http.StatusConflict) {
			t.Fatalf("decision with nothing waiting: %v", err)
		}
	})
}

// TestE2EDryRunAndDeleteStack plans over HTTP (summary, per-step diff,
// missing env refs), then deletes the stack: its resources are destroyed
// and its record removed, with and without waiting.
func TestE2EDryRunAndDeleteStack(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	root := t.TempDir()
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			dir := filepath.Join(root, fmt.Sprint(wait))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			st, err := h.client.CreateStack(ctx, model.StackInput{Name: "doomed"})
			if err != nil {
				t.Fatal(err)
			}
			mustStatus(t, h.applyWait(st.ID, plainFiles(dir, "hello\n"), client.ApplyOptions{}), model.ExecCompleted)

			changed := plainFiles(dir, "changed\n") + fmt.Sprintf("---\nkind: File\nmetadata: {name: env}\nspec: {path: %s/env, content: {envRef: {key: CAIRNTEST_UNSET_VAR}}}\n", dir)
			plan, _, err := h.client.DryRun(ctx, st.ID, &client.Document{Data: []byte(changed), Format: "yaml"}, client.DryRunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Summary.Update != 1 || plan.Summary.Noop != 2 || len(plan.Diff) != 4 || plan.ExecutionID == "" {
				t.Fatalf("plan %+v", plan)
			}
			if len(plan.MissingEnvRefs) != 1 || plan.MissingEnvRefs[0] != "CAIRNTEST_UNSET_VAR" {
				t.Fatalf("missing env refs %v", plan.MissingEnvRefs)
			}
			for _, d := range plan.Diff {
				if d.Name == "motd" && (d.Action != model.ActionUpdate || len(d.Changes) == 0) {
					t.Fatalf("motd diff %+v", d)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "app", "motd")); string(b) != "hello\n" {
				t.Fatal("a dry-run changed a file")
			}

			ex, err := h.client.DeleteStack(ctx, st.ID, client.DeleteOptions{Wait: wait})
			if err != nil {
				t.Fatal(err)
			}
			if ex.Kind != model.ExecDestroy {
				t.Fatalf("delete answered %+v", ex)
			}
			waitUntil(t, "the stack record is removed", func() bool {
				_, err := h.client.GetStack(ctx, st.ID)
				return client.IsStatus(err, http.StatusNotFound)
			})
			if wait {
				mustStatus(t, ex, model.ExecCompleted)
				wantReport(t, ex.Report, model.Report{Deleted: 3})
			}
			if _, err := os.Stat(filepath.Join(dir, "app")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("destroy left %s/app: %v", dir, err)
			}
		})
	}
	if _, err := h.client.DeleteStack(ctx, "missing", client.DeleteOptions{Wait: true}); !client.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("delete of a missing stack: %v", err)
	}
}

func plainFiles(dir, motd string) string {
	return fmt.Sprintf(`kind: Directory
metadata: {name: app}
spec: {path: %[1]s/app}
---
kind: File
metadata: {name: motd}
spec: {path: %[1]s/app/motd, content: %[2]q, mode: "0640"}
---
kind: File
metadata: {name: conf}
spec: {path: %[1]s/app/app.conf, content: "port = 80\n"}
`, dir, motd)
}

// TestE2EEventsEndWhenTheExecutionCloses follows an execution with a poll
// interval far longer than the execution: the done event must come from
// the execution closing, not from the next poll.
func TestE2EEventsEndWhenTheExecutionCloses(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.EventsPollInterval = time.Hour }})
	ctx := ctxTimeout(t, 2*time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "events-close"})
	require.NoError(t, err)
	root := t.TempDir()
	pkg := fmt.Sprintf("kind: Exec\nmetadata: {name: short}\nspec: {command: \"sleep 2; touch %[1]s/done\", creates: %[1]s/done}\n", root)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	start := time.Now()
	var final *model.Execution
	require.NoError(t, h.client.Events(ctx, ex.ID, func(ev client.Event) error {
		if ev.Type == client.EventDone {
			final = ev.Execution
		}
		return nil
	}))
	require.NotNil(t, final, "no done event")
	assert.Equal(t, model.ExecCompleted, final.Status)
	assert.Less(t, time.Since(start), 30*time.Second, "the done event waited for a poll")
	assert.FileExists(t, filepath.Join(root, "done"))
}
