package starter_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.True(t, ok, "platform label = %v", obj)
	require.Equal(t, secretDesc, obj["description"], "platform label = %v", obj)
	for _, secret := range []string{token, secretDesc} {
		require.False(t, historyHolds(t, h, e, secret), "secret %q reached workflow history", secret)
		for _, st := range e.Steps {
			for _, c := range st.Changes {
				require.NotContains(t, asString(c.New), secret, "secret in step changes: %+v", c)
				require.NotContains(t, asString(c.Old), secret, "secret in step changes: %+v", c)
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
	require.NotNil(t, plan.Plan, "plan = %+v", plan.Plan)
	require.Len(t, plan.Plan.MissingSecrets, 1, "plan = %+v", plan.Plan)
	require.Equal(t, "not-there", plan.Plan.MissingSecrets[0], "plan = %+v", plan.Plan)
	// The step fails before changing anything: nothing to roll back.
	failed := h.apply(s.ID, missing, starter.StackRun{})
	mustStatus(t, failed, model.ExecFailed)
	require.Contains(t, failed.Error, "missing secret not-there", "error %q does not name the missing secret", failed.Error)
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
		require.NoError(t, err)
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
	// Visibility is eventually consistent: an execution that closed may
	// still be listed as running for a moment.
	waitFor(t, func() bool {
		list, _, err := h.starter.List(ctx, starter.Filter{Stack: s.ID})
		if err != nil {
			t.Log(err)
		}
		got = list
		if err != nil || len(list) != 2 {
			return false
		}
		// Visibility follows the executions' closes a moment behind.
		for _, e := range list {
			if e.Status != model.ExecCompleted {
				return false
			}
		}
		return true
	})
	ids := map[string]model.ExecutionKind{}
	for _, e := range got {
		ids[e.ID] = e.Kind
		require.Equal(t, s.ID, e.StackID, "listed %+v", e)
		require.Equal(t, model.ExecCompleted, e.Status, "listed %+v", e)
	}
	require.Equal(t, model.ExecApply, ids[a.ID], "listed ids %v, want %s and %s", ids, a.ID, d.ID)
	require.Equal(t, model.ExecDryRun, ids[d.ID], "listed ids %v, want %s and %s", ids, a.ID, d.ID)
	only, _, err := h.starter.List(ctx, starter.Filter{Stack: s.ID, Kind: model.ExecDryRun})
	require.NoError(t, err, "dry-runs only: %v %v", only, err)
	require.Len(t, only, 1, "dry-runs only: %v %v", only, err)
	require.Equal(t, d.ID, only[0].ID, "dry-runs only: %v %v", only, err)
}
