package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

const aliceToken = "alice-cli-t0ken"

// awaitsApproval is the line apply --approve-required ends its plan with.
var awaitsApproval = regexp.MustCompile(`Execution (\S+) awaits approval`)

// applyingAs finds the apply exec approve started.
var applyingAs = regexp.MustCompile(`applying as (\S+);`)

// planForApproval runs apply --approve-required of pkg on the stack and
// returns the plan's execution id and the command's result.
func (s *apiServer) planForApproval(t *testing.T, stack, pkg string, code int, extra ...string) (string, cliResult) {
	t.Helper()
	args := append([]string{"apply", "--stack", stack, pkg, "--approve-required"}, extra...)
	r := s.run(args...).expect(t, code)
	m := awaitsApproval.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, "no execution id in:\n%s", r.stdout)
	return m[1], r
}

// asAlice runs cairn with alice's named token.
func (s *apiServer) asAlice(args ...string) cliResult {
	s.t.Helper()
	return runCairn(s.t, append(args, "--server", s.url, "--token", aliceToken)...)
}

// listed polls exec list with the flags until want(ids listed) holds.
func (s *apiServer) listed(t *testing.T, what string, want func(map[string]model.Execution) bool, flags ...string) map[string]model.Execution {
	t.Helper()
	var ids map[string]model.Execution
	s.waitUntil(what, func() bool {
		out := s.run(append([]string{"exec", "list", "-o", "json"}, flags...)...).expect(t, 0).stdout
		var list model.ExecutionList
		require.NoError(t, json.Unmarshal([]byte(out), &list), out)
		ids = map[string]model.Execution{}
		for _, e := range list.Executions {
			ids[e.ID] = e
		}
		return want(ids)
	})
	return ids
}

func TestApprovedPlanCLI(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "tok", tokens: map[string]string{"alice": aliceToken}})

	t.Run("approved", func(t *testing.T) {
		stack := s.stack("approved")
		root := s.path("approved")
		require.NoError(t, os.Mkdir(root, 0o755))
		pkg := s.file("approved.yaml", sitePackage(root, "hello"))

		// The plan's convention: 2 when it has changes.
		id, r := s.planForApproval(t, stack, pkg, 2, "--approval-timeout", "72h", "--detailed-exitcode")
		r.has(t, "dry-run "+id, "+ file/motd will be created", "Plan: 2 to create", "awaits approval until ",
			"cairn exec approve "+id, "cairn exec reject "+id)
		assert.NoDirExists(t, root+"/site", "a plan awaiting approval changed something")

		s.run("exec", "show", id).expect(t, 0).has(t, "Status:", "waiting", "Awaiting:", "approval until",
			"Approval:", "awaiting", "+ file/motd will be created", "Plan: 2 to create", "cairn exec approve "+id)

		// Lists tell a plan awaiting approval apart.
		waiting := s.listed(t, "the plan listed as waiting", func(m map[string]model.Execution) bool { return m[id].ID != "" },
			"--stack", stack, "--status", "waiting")
		assert.Equal(t, model.ExecWaiting, waiting[id].Status)
		assert.Equal(t, "approval", waiting[id].Awaiting)
		assert.Equal(t, model.ExecDryRun, waiting[id].Kind)
		table := s.run("exec", "list", "--stack", stack).expect(t, 0).stdout
		assert.Regexp(t, regexp.MustCompile(regexp.QuoteMeta(id)+`\s+dry-run\s+waiting \(approval\)`), table)
		running := s.run("exec", "list", "--stack", stack, "--status", "running", "-o", "json").expect(t, 0).stdout
		assert.NotContains(t, running, id, "a plan awaiting approval is listed as running")

		r = s.asAlice("exec", "approve", id, "--comment", "ship it").expect(t, 0)
		r.has(t, id+" approved by alice", "applying as stack-"+stack+".")
		applyID := applyingAs.FindStringSubmatch(r.stdout)[1]
		s.run("exec", "watch", applyID).expect(t, 0).has(t, "Apply completed")
		assert.Equal(t, "hello", readFile(t, root+"/site/motd"))

		done := s.waitExecution(id, "closed", (*model.Execution).Finished)
		require.Equal(t, model.ExecCompleted, done.Status)
		require.NotNil(t, done.Report)
		assert.Equal(t, 2, done.Report.Created, "the apply created what the plan showed")
		s.run("exec", "show", id).expect(t, 0).has(t, "completed", "Approval:", "approved by alice at ",
			"Comment:", "ship it", "Applied by:", applyID)
		st, err := s.client.GetStack(s.ctx(), stack)
		require.NoError(t, err)
		assert.Equal(t, applyID, st.LastExecutionID)

		s.asAlice("exec", "approve", id).expect(t, 1).hasErr(t, "409")
	})

	t.Run("rejected", func(t *testing.T) {
		stack := s.stack("rejected")
		root := s.path("rejected")
		require.NoError(t, os.Mkdir(root, 0o755))
		id, _ := s.planForApproval(t, stack, s.file("rejected.yaml", sitePackage(root, "no")), 0)

		// A watch of the waiting plan says how to decide, then follows it
		// to its end.
		watched := make(chan cliResult, 1)
		go func() { watched <- runCairn(t, "exec", "watch", id, "--server", s.url, "--token", "tok") }()
		time.Sleep(time.Second)
		s.asAlice("exec", "reject", id, "--comment", "not today").expect(t, 0).has(t, id+" rejected by alice")
		(<-watched).expect(t, 1).has(t, "awaiting approval: approve with: cairn exec approve "+id, "Dry-run rejected")
		ended := s.waitExecution(id, "closed", (*model.Execution).Finished)
		assert.Equal(t, model.ExecRejected, ended.Status)
		s.run("exec", "show", id).expect(t, 0).has(t, "rejected", "Approval:", "rejected by alice", "not today")
		assert.NoDirExists(t, root+"/site", "a rejected plan changed something")

		rejected := s.listed(t, "the plan listed as rejected", func(m map[string]model.Execution) bool { return m[id].ID != "" },
			"--stack", stack, "--status", "rejected")
		assert.Equal(t, model.ExecRejected, rejected[id].Status)
		completed := s.run("exec", "list", "--stack", stack, "--status", "completed", "-o", "json").expect(t, 0).stdout
		assert.NotContains(t, completed, id, "a rejected plan is listed as completed")

		s.asAlice("exec", "reject", id).expect(t, 1).hasErr(t, "409")
	})

	t.Run("the stack moved", func(t *testing.T) {
		stack := s.stack("moved")
		root := s.path("moved")
		require.NoError(t, os.Mkdir(root, 0o755))
		id, _ := s.planForApproval(t, stack, s.file("planned.yaml", sitePackage(root, "planned")), 0)
		s.run("apply", "--stack", stack, s.file("other.yaml", sitePackage(root, "other"))).expect(t, 0)
		st, err := s.client.GetStack(s.ctx(), stack)
		require.NoError(t, err)
		require.NotEmpty(t, st.LastExecutionID)

		r := s.asAlice("exec", "approve", id).expect(t, 1)
		r.hasErr(t, "409", "The plan "+id+" no longer holds", "stack: execution "+st.LastExecutionID+" was recorded on it",
			"Nothing was changed and the plan ended")
		assert.Equal(t, "other", readFile(t, root+"/site/motd"), "a refused approval changed a file")
		ended := s.waitExecution(id, "closed", (*model.Execution).Finished)
		assert.Equal(t, model.ExecRejected, ended.Status)
		s.run("exec", "show", id).expect(t, 0).has(t, "stale", "Reason:", st.LastExecutionID)
	})

	t.Run("a planned file changed", func(t *testing.T) {
		stack := s.stack("edited")
		root := s.path("edited")
		require.NoError(t, os.Mkdir(root, 0o755))
		s.run("apply", "--stack", stack, s.file("v1.yaml", sitePackage(root, "v1"))).expect(t, 0)
		id, r := s.planForApproval(t, stack, s.file("v2.yaml", sitePackage(root, "v2")), 0)
		r.has(t, "~ file/motd will be updated", "Plan: 0 to create, 1 to update")
		require.NoError(t, os.WriteFile(root+"/site/motd", []byte("by hand"), 0o644))

		s.asAlice("exec", "approve", id).expect(t, 1).hasErr(t, "409", "The plan "+id+" no longer holds",
			"  file/motd: update as planned, but its current state reads differently")
		assert.Equal(t, "by hand", readFile(t, root+"/site/motd"), "a refused approval changed a file")
	})

	t.Run("bad flags", func(t *testing.T) {
		s.run("apply", "--stack", "approved", s.path("approved.yaml"), "--approval-timeout", "1h").
			expect(t, 1).hasErr(t, "--approval-timeout goes with --approve-required")
		out := s.run("exec", "list", "--status", "rejected").expect(t, 0).stdout
		assert.True(t, strings.HasPrefix(out, "ID"), out)
	})
}
