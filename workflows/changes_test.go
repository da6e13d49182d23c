package workflows

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// ChangesSuite checks the progress query asked for the changes since a
// version: what it lists, that a follower asking from each answer's
// version misses nothing and reads nothing twice when nothing moved, and
// that callers of the two-argument query still page by offset.
type ChangesSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
}

func TestChangesSuite(t *testing.T) {
	suite.Run(t, new(ChangesSuite))
}

func (s *ChangesSuite) env(f *fakeActivities) *testsuite.TestWorkflowEnvironment {
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: StackWorkflowID("s1")})
	f.register(env)
	return env
}

// since asks env's progress query for the changes after v.
func (s *ChangesSuite) since(env *testsuite.TestWorkflowEnvironment, v int64, limit int) *model.ProgressPage {
	val, err := env.QueryWorkflow(ProgressQuery, 0, limit, &ProgressSince{Version: v})
	s.Require().NoError(err)
	var p model.ProgressPage
	s.Require().NoError(val.Get(&p))
	return &p
}

// ids lists the page's step ids in order.
func ids(p *model.ProgressPage) []string {
	var out []string
	for _, sp := range p.Steps {
		out = append(out, sp.ID)
	}
	return out
}

// statuses maps the page's step ids to their statuses.
func statuses(p *model.ProgressPage) map[string]model.Status {
	out := map[string]model.Status{}
	for _, sp := range p.Steps {
		out[sp.ID] = sp.Status
	}
	return out
}

// TestPauseAndRetry follows a run that pauses on a failing step: at the
// pause every unit is listed once from 0, nothing from the answer's
// version; after a retry, only the units that moved — the retried step
// and the one after it, not the first, which was done before the pause.
func (s *ChangesSuite) TestPauseAndRetry() {
	f := newFake(unit(0, "exec/first"), unit(1, "exec/flaky", 0), unit(2, "exec/after", 1))
	f.failures["exec/flaky"] = 1
	env := s.env(f)
	var atPause, again *model.ProgressPage
	env.RegisterDelayedCallback(func() {
		atPause = s.since(env, 0, 0)
		again = s.since(env, atPause.Version, 0)
		env.UpdateWorkflow(DecisionUpdate, "d1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Failf("rejected", "%v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, model.DecisionRequest{Action: model.DecisionRetry})
	}, time.Minute)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
	s.Require().NoError(env.GetWorkflowError())

	s.Require().NotNil(atPause, "the pause was not reached")
	s.Equal(model.ExecWaiting, atPause.Status)
	s.Equal([]string{"exec/flaky"}, atPause.Waiting)
	s.Equal(map[string]model.Status{"exec/first": model.StatusSucceeded, "exec/flaky": model.StatusWaiting, "exec/after": model.StatusPending},
		statuses(atPause))
	s.Len(atPause.Steps, 3, "each step once")
	s.False(atPause.More)
	s.Positive(atPause.Version)
	// The oldest change first: the step after has not moved since the run
	// began, the first finished before the flaky one was held.
	s.Equal([]string{"exec/after", "exec/first", "exec/flaky"}, ids(atPause))

	s.Empty(again.Steps, "nothing moved while paused")
	s.Equal(atPause.Version, again.Version)
	s.Equal(atPause.Total, again.Total)

	after := s.since(env, atPause.Version, 0)
	s.Equal(map[string]model.Status{"exec/flaky": model.StatusSucceeded, "exec/after": model.StatusSucceeded}, statuses(after))
	s.Equal(model.ExecCompleted, after.Status)
	s.Equal(3, after.Done)
	s.Greater(after.Version, atPause.Version)
	s.Empty(s.since(env, after.Version, 0).Steps, "the closed run has nothing after its last version")
}

// TestRollback: a rollback decided at a pause changes the units it undid,
// and the changes after the pause's version say so.
func (s *ChangesSuite) TestRollback() {
	f := newFake(unit(0, "exec/first"), unit(1, "exec/other"), unit(2, "exec/flaky", 0))
	f.failures["exec/flaky"] = -1
	env := s.env(f)
	var atPause *model.ProgressPage
	env.RegisterDelayedCallback(func() {
		atPause = s.since(env, 0, 0)
		env.UpdateWorkflow(DecisionUpdate, "d1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Failf("rejected", "%v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, model.DecisionRequest{Action: model.DecisionRollback})
	}, time.Minute)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput(model.OnFailurePause, 10))
	s.Require().Error(env.GetWorkflowError())
	s.Require().NotNil(atPause)
	after := s.since(env, atPause.Version, 0)
	got := statuses(after)
	s.Equal(model.StatusRolledBack, got["exec/first"])
	s.Equal(model.StatusRolledBack, got["exec/other"])
	s.Equal(model.StatusFailed, got["exec/flaky"])
	s.Equal(model.ExecRolledBack, after.Status)
}

// TestPagesOfChanges: a limit cuts the changes into answers that, asked
// one after the other from each answer's version, list every step once;
// the last one's version is where nothing is left.
func (s *ChangesSuite) TestPagesOfChanges() {
	var units []contract.Unit
	for i := range 7 {
		units = append(units, unit(i, "exec/s"+string(rune('a'+i))))
	}
	env := s.env(newFake(units...))
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 3))
	s.Require().NoError(env.GetWorkflowError())

	seen := map[string]int{}
	var v int64
	pages := 0
	for {
		p := s.since(env, v, 2)
		pages++
		s.LessOrEqual(len(p.Steps), 2)
		for _, sp := range p.Steps {
			seen[sp.ID]++
			s.Equal(model.StatusSucceeded, sp.Status, sp.ID)
		}
		s.Greater(p.Version, v, "each answer moves the version on")
		v = p.Version
		if !p.More {
			break
		}
		s.Require().Less(pages, 10, "the pages do not end")
	}
	s.Equal(4, pages)
	s.Len(seen, 7)
	for id, n := range seen {
		s.Equal(1, n, id)
	}
	s.Empty(s.since(env, v, 2).Steps)

	// A version above the counter is not this run's: everything, from 0.
	reset := s.since(env, v+100, 0)
	s.True(reset.Reset)
	s.Len(reset.Steps, 7)
	s.Equal(v, reset.Version)

	// Two arguments, as callers before versions sent: a page by offset.
	val, err := env.QueryWorkflow(ProgressQuery, 5, 10)
	s.Require().NoError(err)
	var page model.ProgressPage
	s.Require().NoError(val.Get(&page))
	s.Equal(7, page.Entries)
	s.Equal(5, page.Offset)
	s.Len(page.Steps, 2)
	s.False(page.More)
	// None at all: the first page.
	val, err = env.QueryWorkflow(ProgressQuery)
	s.Require().NoError(err)
	s.Require().NoError(val.Get(&page))
	s.Len(page.Steps, 7)
}

// TestChangesStayBelowThePayloadWarning: every unit of a large run has
// changed since 0, yet one answer stays below the SDK's payload warning
// (512 KB) and says there is more.
func (s *ChangesSuite) TestChangesStayBelowThePayloadWarning() {
	const steps = 4000
	var units []contract.Unit
	for i := range steps {
		units = append(units, unit(i, fmt.Sprintf("exec/node-%04d-of-a-large-fleet/task-%04d", i/20, i%20)))
	}
	env := s.env(newFake(units...))
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	s.Require().NoError(env.GetWorkflowError())
	p := s.since(env, 0, 0)
	raw, err := json.Marshal(p)
	s.Require().NoError(err)
	s.Less(len(raw), 512<<10, "%d steps in %d bytes", len(p.Steps), len(raw))
	s.True(p.More)
	s.NotEmpty(p.Steps)
	s.Less(len(p.Steps), steps)
	next := s.since(env, p.Version, 0)
	s.NotEqual(p.Steps[0].ID, next.Steps[0].ID, "the next answer goes on from the last")
}

// TestShardsTellTheirFinalVersions: a sharded run's parent lists every
// finished shard's final version, which its children reached by changing
// each of their units at least once.
func (s *ChangesSuite) TestShardsTellTheirFinalVersions() {
	f := newFake()
	f.plan = contract.PreparedPlan{Steps: 5, Shards: []contract.Shard{
		{Index: 0, First: 0, Units: 2, Steps: 2}, {Index: 1, First: 2, Units: 3, Steps: 3},
	}}
	f.shards = map[int][]contract.Unit{
		0: {unit(0, "exec/a"), unit(1, "exec/b", 0)},
		1: {unit(2, "exec/c", 1), unit(3, "exec/d"), unit(4, "exec/e", 3)},
	}
	env := s.env(f)
	env.ExecuteWorkflow(ApplyWorkflow, applyInput("", 10))
	s.Require().NoError(env.GetWorkflowError())
	p := s.since(env, 0, 0)
	s.Require().NotNil(p.Shard)
	s.Require().Len(p.Shard.Versions, 2)
	// Each unit started and finished: at least two changes a unit.
	s.GreaterOrEqual(p.Shard.Versions[0], int64(2*2))
	s.GreaterOrEqual(p.Shard.Versions[1], int64(2*3))
	s.Empty(p.Steps, "the parent lists no steps: its shards do")
}
