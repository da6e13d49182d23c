package starter_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// secretKinds: a label kind whose requests carry a bearer token from a
// secret, and whose description may come from one too.
const secretKinds = `apiVersion: cairn/v1
kind: Kind
metadata: {name: Label}
spec:
  base: http
  wrap: body
  defaults:
    url: {envRef: {key: PLATFORM_URL}}
    path: /api/v2/labels
    headers: {Authorization: {secretRef: {key: platform-auth}}}
  schema: {type: object, properties: {name: {type: string}, description: {}}, required: [name], additionalProperties: false}
`

// TestSecretsStayOutOfHistory resolves secrets inside the activities only:
// the token and a secret-derived value reach the platform, never the
// workflow history (no codec here), and a missing secret is named by
// dry-run and refused by apply.
func TestSecretsStayOutOfHistory(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a"
	const secretDesc = "desc-1a2b3c4d5e6f"
	p := newS1Platform(t)
	p.plat.SetToken(token)
	h := newHarness(t, harnessOptions{
		env:     map[string]string{"PLATFORM_URL": p.url},
		secrets: map[string]string{"platform-auth": "Bearer " + token, "label-desc": secretDesc},
	})
	s := h.stack("secrets")
	docs := secretKinds + `---
apiVersion: cairn/v1
kind: Label
metadata: {name: l1}
spec: {name: label_1, description: {secretRef: {key: label-desc}}}
`
	e := h.apply(s.ID, docs, starter.StackRun{})
	mustStatus(t, e, model.ExecCompleted)
	obj, ok := p.plat.Find("labels", "label_1")
	if !ok || obj["description"] != secretDesc {
		t.Fatalf("platform label = %v", obj)
	}
	for _, secret := range []string{token, secretDesc} {
		if historyHolds(t, h, e, secret) {
			t.Fatalf("secret %q reached workflow history", secret)
		}
		for _, st := range e.Steps {
			for _, c := range st.Changes {
				if strings.Contains(asString(c.New), secret) || strings.Contains(asString(c.Old), secret) {
					t.Fatalf("secret in step changes: %+v", c)
				}
			}
		}
	}

	missing := secretKinds + `---
apiVersion: cairn/v1
kind: Label
metadata: {name: l1}
spec: {name: label_1, description: {secretRef: {key: not-there}}}
`
	plan := h.dryRun(s.ID, missing)
	mustStatus(t, plan, model.ExecCompleted)
	if plan.Plan == nil || len(plan.Plan.MissingSecrets) != 1 || plan.Plan.MissingSecrets[0] != "not-there" {
		t.Fatalf("plan = %+v", plan.Plan)
	}
	// The step fails before changing anything: nothing to roll back.
	failed := h.apply(s.ID, missing, starter.StackRun{})
	mustStatus(t, failed, model.ExecFailed)
	if !strings.Contains(failed.Error, "missing secret not-there") {
		t.Fatalf("error %q does not name the missing secret", failed.Error)
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func historyHolds(t *testing.T, h *harness, e *starter.Execution, needle string) bool {
	t.Helper()
	it := h.dev.Client.GetWorkflowHistory(context.Background(), e.WorkflowID, e.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := proto.Marshal(ev)
		if bytes.Contains(raw, []byte(needle)) {
			return true
		}
	}
	return false
}

// TestListFindsExecutionsByStack lists executions through Temporal
// visibility with Cairn's search attributes.
func TestListFindsExecutionsByStack(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	root := t.TempDir()
	s := h.stack("listed")
	a := h.apply(s.ID, filesPackage(root, "a\n"), starter.StackRun{})
	d := h.dryRun(s.ID, filesPackage(root, "b\n"))
	ctx := context.Background()
	var got []*starter.Execution
	waitFor(t, func() bool {
		list, _, err := h.starter.List(ctx, starter.Filter{Stack: s.ID})
		if err != nil {
			t.Log(err)
		}
		got = list
		return err == nil && len(list) == 2
	})
	ids := map[string]model.ExecutionKind{}
	for _, e := range got {
		ids[e.ID] = e.Kind
		if e.StackID != s.ID || e.Status != model.ExecCompleted {
			t.Fatalf("listed %+v", e)
		}
	}
	if ids[a.ID] != model.ExecApply || ids[d.ID] != model.ExecDryRun {
		t.Fatalf("listed ids %v, want %s and %s", ids, a.ID, d.ID)
	}
	only, _, err := h.starter.List(ctx, starter.Filter{Stack: s.ID, Kind: model.ExecDryRun})
	if err != nil || len(only) != 1 || only[0].ID != d.ID {
		t.Fatalf("dry-runs only: %v %v", only, err)
	}
}
