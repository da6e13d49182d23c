package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/workflows"
)

// fourEyes is a Cairn whose API takes the named tokens of an author and
// two approvers; each has a client of its own.
type fourEyes struct {
	*cairn
	dev, ann, bob *client.Client
	tokens        map[string]string
}

func newFourEyes(t *testing.T, o cairnOptions) *fourEyes {
	t.Helper()
	tokens := map[string]string{"dev": "dev-t0ken-writes", "ann": "ann-t0ken-approves", "bob": "bob-t0ken-approves"}
	o.cfg = func(c *Config) { c.Tokens = tokens }
	f := &fourEyes{cairn: newCairn(t, o), tokens: tokens}
	for name, c := range map[string]**client.Client{"dev": &f.dev, "ann": &f.ann, "bob": &f.bob} {
		var err error
		*c, err = client.New(f.url, tokens[name])
		require.NoError(t, err)
	}
	return f
}

// approveRaw posts an approval with body as it is, with name's token.
func (f *fourEyes) approveRaw(t *testing.T, name, id, body string) *model.Approval {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxTimeout(t, 3*time.Minute), http.MethodPost, f.url+"/v1/executions/"+id+"/approve", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.tokens[name])
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode, buf.String())
	var a model.Approval
	require.NoError(t, json.Unmarshal(buf.Bytes(), &a))
	return &a
}

// memo reads the operator acts in an execution's Temporal memo.
func (f *fourEyes) memo(t *testing.T, id string) []workflows.MemoEntry {
	t.Helper()
	wfID, runID := starter.ParseExecutionID(id)
	d, err := f.temporal.DescribeWorkflowExecution(ctxTimeout(t, time.Minute), wfID, runID)
	require.NoError(t, err)
	p := d.GetWorkflowExecutionInfo().GetMemo().GetFields()[workflows.MemoDecisions]
	require.NotNil(t, p, "no %s in the memo of %s", workflows.MemoDecisions, id)
	var out []workflows.MemoEntry
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &out))
	return out
}

func approvers(a *model.Approval) []string {
	var by []string
	for _, v := range a.Approvals {
		by = append(by, v.By)
	}
	return by
}

// A stack requiring two approvals: an apply that did not ask for approval
// plans and waits; its author cannot approve it (403); one approval
// leaves it waiting, 1 of 2, whoever the body names; the same approver
// again counts once; a second approver applies exactly the plan shown.
// The approvals are in the execution's Temporal memo. A destroy, or a
// retry, of the stack is refused while the policy holds.
func TestE2EFourEyesOnAStack(t *testing.T) {
	f := newFourEyes(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	dir := t.TempDir()
	st, err := f.client.CreateStack(ctx, model.StackInput{Name: "web"})
	require.NoError(t, err)
	set, err := f.client.SetApprovals(ctx, client.StackApprovals, st.ID, model.ApprovalPolicy{Required: 2})
	require.NoError(t, err)
	assert.Equal(t, model.ApprovalPolicy{Required: 2}, *set)
	got, err := f.client.Approvals(ctx, client.StackApprovals, st.ID)
	require.NoError(t, err)
	assert.Equal(t, *set, *got)
	// Principals of the store: an approver of this stack is named among
	// those who may approve; one of another stack, and a viewer, are not.
	other, err := f.client.CreateStack(ctx, model.StackInput{Name: "db"})
	require.NoError(t, err)
	for _, p := range []struct {
		name  string
		grant model.Grant
	}{
		{"carol", model.Grant{Role: model.RoleApprover, Stacks: []string{st.ID}}},
		{"dave", model.Grant{Role: model.RoleApprover, Stacks: []string{other.ID}}},
		{"erin", model.Grant{Role: model.RoleViewer, Stacks: []string{st.ID}}},
	} {
		_, err := f.client.CreatePrincipal(ctx, model.PrincipalInput{Name: p.name})
		require.NoError(t, err)
		_, err = f.client.CreateToken(ctx, model.TokenInput{Principal: p.name, Roles: []model.Grant{p.grant}})
		require.NoError(t, err)
	}

	ex, err := f.dev.Apply(ctx, st.ID, &client.Document{Data: []byte(filesPackage(dir, "four eyes\n")), Format: "yaml"}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	require.Equal(t, model.ExecWaiting, ex.Status, "error %q", ex.Error)
	require.Equal(t, "approval", ex.Awaiting)
	require.NotNil(t, ex.Approval)
	assert.Equal(t, 2, ex.Approval.Required)
	assert.Equal(t, "dev", ex.Approval.Author)
	assert.Equal(t, "ann, bob, carol (principals with approver on stack "+st.ID+")", ex.Approval.MayApprove,
		"the named tokens are admins; carol approves this stack; dev is the author")
	assert.Contains(t, ex.Approval.Policy, "requires 2 approval(s)", "the answer says why it waits")
	require.NotNil(t, ex.Plan)
	assert.Equal(t, model.Summary{Create: 3}, ex.Plan.Summary)
	motd := filepath.Join(dir, "app", "motd")
	assert.NoFileExists(t, motd, "an apply awaiting approval changed a file")

	_, err = f.dev.Approve(ctx, ex.ID, "mine")
	apiErr := assertStatus(t, err, http.StatusForbidden)
	assert.Contains(t, apiErr.Message, "author")

	one := f.approveRaw(t, "ann", ex.ID, `{"comment": "looks right", "by": "bob"}`)
	assert.Equal(t, model.ApprovalAwaiting, one.Status)
	assert.Equal(t, []string{"ann"}, approvers(one), "the body named bob; the token is ann's")
	again, err := f.ann.Approve(ctx, ex.ID, "again")
	require.NoError(t, err)
	assert.Equal(t, []string{"ann"}, approvers(again), "the same approver counts once")

	shown, err := f.client.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	assert.Equal(t, model.ExecWaiting, shown.Status)
	require.NotNil(t, shown.Approval)
	assert.Equal(t, 2, shown.Approval.Required)
	require.Len(t, shown.Approval.Approvals, 1, "GET shows 1 of 2")
	assert.Equal(t, "ann", shown.Approval.Approvals[0].By)
	assert.Equal(t, "looks right", shown.Approval.Approvals[0].Comment)
	assert.False(t, shown.Approval.Approvals[0].At.IsZero())
	assert.NoFileExists(t, motd, "one approval of two applied")

	_, err = f.client.DeleteStack(ctx, st.ID, client.DeleteOptions{})
	assertStatus(t, err, http.StatusConflict)

	res, err := f.bob.Approve(ctx, ex.ID, "ship it")
	require.NoError(t, err)
	assert.Equal(t, model.ApprovalApproved, res.Status)
	assert.ElementsMatch(t, []string{"ann", "bob"}, approvers(res))
	applied := awaitClosed(t, f.client, res.ApplyExecutionID)
	mustStatus(t, applied, model.ExecCompleted)
	wantReport(t, applied.Report, model.Report{Created: 3})
	content, err := os.ReadFile(motd)
	require.NoError(t, err)
	assert.Equal(t, "four eyes\n", string(content))

	var acts []string
	for _, e := range f.memo(t, ex.ID) {
		acts = append(acts, e.Action+" "+e.By)
	}
	assert.Equal(t, []string{"approve ann", "approve bob"}, acts, "the memo keeps the approvals")

	// The audit trail has each answer to the plan, refused or not, oldest
	// last.
	trail, err := f.client.Audit(ctx, model.AuditFilter{Execution: ex.ID})
	require.NoError(t, err)
	var answers []string
	for _, e := range trail.Entries {
		if e.Route == "/v1/executions/:id/approve" {
			answers = append(answers, fmt.Sprintf("%s %d", e.Principal, e.Status))
		}
	}
	assert.Equal(t, []string{"bob 200", "ann 200", "ann 200", "dev 403"}, answers, "the trail of the plan's approvals")

	_, err = f.client.Retry(ctx, res.ApplyExecutionID)
	assert.Contains(t, assertStatus(t, err, http.StatusConflict).Message, "four eyes",
		"refused by the policy (a finished execution is refused anyway, with another message)")

	require.NoError(t, f.client.ClearApprovals(ctx, client.StackApprovals, st.ID))
	_, err = f.client.Approvals(ctx, client.StackApprovals, st.ID)
	assertStatus(t, err, http.StatusNotFound)
	_, err = f.client.SetApprovals(ctx, client.StackApprovals, st.ID, model.ApprovalPolicy{Required: model.MaxApprovers + 1})
	assertStatus(t, err, http.StatusUnprocessableEntity)
}

// Secrets sent with an apply that waits for approval are only sealed in
// the store while it waits, are not kept for the stack, and are deleted
// when the plan is rejected.
func TestE2EWaitingSecretsAreDeletedOnReject(t *testing.T) {
	f := newFourEyes(t, cairnOptions{sealKey: []byte("0123456789abcdef0123456789abcdef")})
	ctx := ctxTimeout(t, 4*time.Minute)
	dir := t.TempDir()
	st, err := f.client.CreateStack(ctx, model.StackInput{Name: "secretive"})
	require.NoError(t, err)
	_, err = f.client.SetApprovals(ctx, client.StackApprovals, st.ID, model.ApprovalPolicy{})
	require.NoError(t, err)
	pkg := filesPackage(dir, "x\n") + "---\nkind: File\nmetadata: {name: token}\nspec: {path: " + dir + "/app/token, content: {secretRef: {key: API_TOKEN}}}\n"
	ex, err := f.dev.Apply(ctx, st.ID, &client.Document{Data: []byte(pkg), Format: "yaml"},
		client.ApplyOptions{Params: model.ApplyParams{Secrets: map[string]string{"API_TOKEN": "s3cret-while-waiting"}}})
	require.NoError(t, err)
	require.Equal(t, model.ExecWaiting, ex.Status, "error %q", ex.Error)

	paramsRecords := func() []string {
		var out []string
		after := ""
		for {
			ids, err := f.store.StepDataExecutions(ctx, after, 100)
			require.NoError(t, err)
			if len(ids) == 0 {
				return out
			}
			for _, id := range ids {
				if strings.HasPrefix(id, "params/") {
					out = append(out, id)
				}
			}
			after = ids[len(ids)-1]
		}
	}
	require.Len(t, paramsRecords(), 1, "the waiting apply's parameters are kept, sealed")
	_, err = f.store.GetStepData(ctx, contract.StackSecretsExecution(st.ID), contract.ParamsKey, contract.DataParams)
	require.Error(t, err, "the stack kept secrets of a plan not approved")

	_, err = f.ann.Reject(ctx, ex.ID, "no")
	require.NoError(t, err)
	done := awaitClosed(t, f.client, ex.ID)
	mustStatus(t, done, model.ExecRejected)
	waitUntil(t, "the parameters are deleted", func() bool { return len(paramsRecords()) == 0 })
	copyOf, err := f.store.GetStepData(ctx, ex.ID, contract.ParamsKey, contract.DataParams)
	require.NoError(t, err)
	assert.JSONEq(t, "{}", string(copyOf), "the plan's copy of the parameters was not emptied")
	_, err = f.store.GetStepData(ctx, contract.StackSecretsExecution(st.ID), contract.ParamsKey, contract.DataParams)
	require.Error(t, err, "the stack kept secrets of a rejected plan")
	assert.NoFileExists(t, filepath.Join(dir, "app", "token"))
	var acts []string
	for _, e := range f.memo(t, ex.ID) {
		acts = append(acts, e.Action+" "+e.By)
	}
	assert.Equal(t, []string{"reject ann"}, acts)
}

// A cluster requiring an approval: a graph execution plans and waits,
// running nothing; approved, it runs the steps it planned; rejected, it
// ends having run nothing.
func TestE2EFourEyesOnACluster(t *testing.T) {
	f := newFourEyes(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	c := f.client
	cl := f.oneTaskCluster(ctx, "echo ran >> log")
	_, err := c.SetApprovals(ctx, client.ClusterApprovals, cl.ID, model.ApprovalPolicy{Required: 1})
	require.NoError(t, err)
	logFile := filepath.Join(f.nodes.NodeRoot(cl.ID, "n1"), "log")

	for _, tt := range []struct {
		name    string
		approve bool
		want    model.ExecutionStatus
		log     string
	}{
		{"rejected: nothing runs", false, model.ExecRejected, ""},
		{"approved: the planned steps run", true, model.ExecCompleted, "ran\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := f.dev.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{})
			require.NoError(t, err)
			require.Equal(t, model.ExecWaiting, ex.Status, "error %q", ex.Error)
			require.Equal(t, "approval", ex.Awaiting)
			require.NotNil(t, ex.Approval)
			assert.Equal(t, "dev", ex.Approval.Author)
			assert.Equal(t, "ann, bob (principals with approver on cluster "+cl.ID+")", ex.Approval.MayApprove)
			require.NotNil(t, ex.Plan, "the waiting execution shows its plan")
			assert.Equal(t, 1, ex.Plan.Summary.Run+ex.Plan.Summary.Create+ex.Plan.Summary.Update+ex.Plan.Summary.Noop, "plan %+v", ex.Plan.Summary)
			assert.NoFileExists(t, logFile, "a graph execution awaiting approval ran a step")
			_, err = f.dev.Approve(ctx, ex.ID, "")
			assertStatus(t, err, http.StatusForbidden)

			if tt.approve {
				_, err = f.bob.Approve(ctx, ex.ID, "go")
			} else {
				_, err = f.ann.Reject(ctx, ex.ID, "not now")
			}
			require.NoError(t, err)
			done, err := c.Wait(ctx, ex.ID, 100*time.Millisecond)
			require.NoError(t, err)
			mustStatus(t, done, tt.want)
			got, _ := os.ReadFile(logFile)
			assert.Equal(t, tt.log, string(got))
		})
	}
	// A dry run needs no approval.
	dry, err := f.dev.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{DryRun: true})
	require.NoError(t, err)
	done, err := c.Wait(context.Background(), dry.ID, 100*time.Millisecond)
	require.NoError(t, err)
	mustStatus(t, done, model.ExecCompleted)
}

// Decisions are written to the execution's Temporal memo with the
// principal of the token that sent them (a `by` in the body is ignored),
// and so is a cancellation.
func TestE2EDecisionsAndCancelInTheMemo(t *testing.T) {
	f := newFourEyes(t, cairnOptions{})
	ctx := ctxTimeout(t, 4*time.Minute)
	c := f.client
	cl := f.oneTaskCluster(ctx, "test -f ok")
	var err error
	paused := func() *model.Execution {
		ex, err := f.dev.ExecuteGraph(ctx, cl.ID, contract.GraphRequest{OnFailure: model.OnFailurePause})
		require.NoError(t, err)
		waitUntil(t, "the step pauses", func() bool {
			got, err := c.GetExecution(ctx, ex.ID)
			require.NoError(t, err)
			return got.Status == model.ExecWaiting
		})
		return ex
	}

	ex := paused()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/v1/executions/"+ex.ID+"/decision",
		strings.NewReader(`{"action": "skip", "all": true, "by": "mallory"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.tokens["ann"])
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	_, err = c.Wait(ctx, ex.ID, 100*time.Millisecond)
	require.NoError(t, err)
	entries := f.memo(t, ex.ID)
	require.Len(t, entries, 1)
	assert.Equal(t, "skip", entries[0].Action)
	assert.Equal(t, "ann", entries[0].By, "the token's principal, not the body's")
	assert.Len(t, entries[0].Steps, 1, "the step decided")
	assert.False(t, entries[0].At.IsZero())

	ex = paused()
	_, err = c.Cancel(ctx, ex.ID)
	require.NoError(t, err)
	_, err = c.Wait(ctx, ex.ID, 100*time.Millisecond)
	require.NoError(t, err)
	entries = f.memo(t, ex.ID)
	require.NotEmpty(t, entries)
	assert.Equal(t, "cancel", entries[len(entries)-1].Action)
}

// oneTaskCluster makes a release whose default graph is one shell task
// running cmd on every node, and a cluster of it with one local node n1.
func (f *fourEyes) oneTaskCluster(ctx context.Context, cmd string) *model.Cluster {
	f.t.Helper()
	c := f.client
	suffix := strings.ToLower(f.token[len(f.token)-8:])
	rel, err := c.CreateRelease(ctx, model.ReleaseInput{ID: "rel-" + suffix, Name: "release"})
	require.NoError(f.t, err)
	cl, err := c.CreateCluster(ctx, model.ClusterInput{ID: "cl-" + suffix, Name: "cluster", ReleaseID: rel.ID, Nodes: []model.Node{
		{ID: "n1", Roles: []string{"controller"}, Mode: model.NodeLocal},
	}})
	require.NoError(f.t, err)
	require.NoError(f.t, f.nodes.Sync(ctx))
	task, err := json.Marshal([]map[string]any{{"id": "t1", "type": "shell", "roles": []string{"*"}, "parameters": map[string]string{"cmd": cmd}}})
	require.NoError(f.t, err)
	_, err = c.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Data: task, Format: "json"})
	require.NoError(f.t, err)
	return cl
}
