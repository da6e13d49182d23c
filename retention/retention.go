// Package retention deletes what executions left in the store (step data:
// before-states, outputs, plans) once they are closed and past a
// retention period: before-states hold old file bytes and objects' bodies,
// which must not be kept forever.
//
// An execution's step data is needed while it runs (rollback, retried
// units, an operator's decision) and for a while after it closed: a
// retry of a failed execution skips the steps it completed, and a
// dry-run's plan is read from it. What later applies need is in the
// stack record and the package snapshots, which are not step data.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// DefaultRetention is how long step data is kept after its execution
// closed, unless told otherwise.
const DefaultRetention = 7 * 24 * time.Hour

// DefaultAuditRetention is how long audit entries are kept unless told
// otherwise.
const DefaultAuditRetention = 365 * 24 * time.Hour

// pageSize is how many executions one store query lists.
const pageSize = 500

// Describer is the part of the Temporal client the sweeper needs.
type Describer interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// Sweeper deletes the step data of executions closed more than Retention
// ago. An execution Temporal no longer knows (its own retention dropped
// it) is deleted once it has been unknown for Retention, measured from the
// first sweep that found it so.
type Sweeper struct {
	store     store.Store
	temporal  Describer
	retention time.Duration
	log       *slog.Logger
	now       func() time.Time
	// unknown: execution id → when a sweep first found Temporal did not
	// know it.
	unknown map[string]time.Time
	// audit is how long audit entries are kept.
	audit time.Duration
}

// New returns a sweeper; retention <= 0 means DefaultRetention, a nil
// logger discards.
func New(st store.Store, t Describer, retention time.Duration, log *slog.Logger) *Sweeper {
	if retention <= 0 {
		retention = DefaultRetention
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sweeper{store: st, temporal: t, retention: retention, log: log, now: time.Now, unknown: map[string]time.Time{},
		audit: DefaultAuditRetention}
}

// WithAudit sets how long audit entries are kept (<= 0:
// DefaultAuditRetention) and returns s.
func (s *Sweeper) WithAudit(keep time.Duration) *Sweeper {
	if keep <= 0 {
		keep = DefaultAuditRetention
	}
	s.audit = keep
	return s
}

// PruneAudit deletes the audit entries older than the audit retention
// and answers how many.
func (s *Sweeper) PruneAudit(ctx context.Context) (int, error) {
	return s.store.PruneAudit(ctx, s.now().Add(-s.audit))
}

// Interval is how often Run sweeps: a quarter of the retention, between
// a second and an hour.
func (s *Sweeper) Interval() time.Duration {
	return min(max(s.retention/4, time.Second), time.Hour)
}

// Run sweeps every Interval until ctx ends. A failed sweep is logged and
// tried again at the next tick.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.Interval())
	defer t.Stop()
	for {
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("step data retention sweep failed", "deleted", n, "error", err)
		} else if n > 0 {
			s.log.Info("step data past retention deleted", "executions", n, "retention", s.retention)
		}
		if n, err := s.PruneAudit(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("audit retention sweep failed", "error", err)
		} else if n > 0 {
			s.log.Info("audit entries past retention deleted", "entries", n, "retention", s.audit)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes the step data of every execution past its retention and
// returns how many executions it deleted. It goes through all of them
// even when some fail, and returns the first error.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	deleted := 0
	var first error
	seen := map[string]bool{}
	for after := ""; ; {
		page, err := s.store.StepDataExecutions(ctx, after, pageSize)
		if err != nil {
			return deleted, err
		}
		for _, id := range page {
			if contract.IsStackRecord(id) {
				continue // kept while its stack is
			}
			seen[id] = true
			expired, err := s.expired(ctx, id)
			if err == nil && expired {
				if err = s.store.DeleteStepData(ctx, id); err == nil {
					deleted++
					delete(s.unknown, id)
				}
			}
			if err != nil && first == nil {
				first = fmt.Errorf("execution %s: %w", id, err)
			}
		}
		if len(page) < pageSize {
			break
		}
		after = page[len(page)-1]
	}
	for id := range s.unknown {
		if !seen[id] {
			delete(s.unknown, id)
		}
	}
	// Start nonces are consumed within moments of their start.
	if _, err := s.store.PruneStartNonces(ctx, s.now().Add(-s.retention)); err != nil && first == nil {
		first = err
	}
	return deleted, first
}

// expired reports whether execution id closed more than the retention
// ago (or has been unknown to Temporal for that long).
func (s *Sweeper) expired(ctx context.Context, id string) (bool, error) {
	wfID, runID := starter.ParseExecutionID(id)
	desc, err := s.temporal.DescribeWorkflowExecution(ctx, wfID, runID)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		since, ok := s.unknown[id]
		if !ok {
			s.unknown[id] = s.now()
			return false, nil
		}
		return s.now().Sub(since) >= s.retention, nil
	case err != nil:
		return false, err
	}
	delete(s.unknown, id)
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetCloseTime() == nil {
		return false, nil // running, or paused for a decision: rollback and retry need it
	}
	return s.now().Sub(info.GetCloseTime().AsTime()) >= s.retention, nil
}
