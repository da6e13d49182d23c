package starter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// MinDriftInterval is the shortest interval between two drift checks.
const MinDriftInterval = time.Second

// DefaultOverlap is a drift schedule's overlap policy unless told: a
// check still running makes the next one skip.
const DefaultOverlap = "skip"

// ErrInvalidDrift marks drift settings Temporal's schedules cannot take.
var ErrInvalidDrift = errors.New("invalid drift settings")

// ParseDriftSettings checks a drift schedule's interval and overlap
// policy ("" is DefaultOverlap) and returns them in Temporal's terms.
func ParseDriftSettings(set model.DriftSettings) (time.Duration, enumspb.ScheduleOverlapPolicy, error) {
	every, err := time.ParseDuration(set.Every)
	if err != nil || every < MinDriftInterval {
		return 0, 0, fmt.Errorf("%w: every %q: want a duration of at least %s, such as \"10m\"", ErrInvalidDrift, set.Every, MinDriftInterval)
	}
	name := set.Overlap
	if name == "" {
		name = DefaultOverlap
	}
	v, ok := enumspb.ScheduleOverlapPolicy_value["SCHEDULE_OVERLAP_POLICY_"+strings.ToUpper(name)]
	if !ok || v == 0 {
		return 0, 0, fmt.Errorf("%w: overlap %q: want skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all", ErrInvalidDrift, set.Overlap)
	}
	return every, enumspb.ScheduleOverlapPolicy(v), nil
}

func overlapName(p enumspb.ScheduleOverlapPolicy) string {
	if p == enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED {
		return DefaultOverlap
	}
	// The enum's String is CamelCase ("BufferOne"); its proto name is
	// the one ParseDriftSettings reads.
	return strings.ToLower(strings.TrimPrefix(enumspb.ScheduleOverlapPolicy_name[int32(p)], "SCHEDULE_OVERLAP_POLICY_"))
}

// driftAction is what a stack's drift schedule starts: a drift check on
// the control plane's queue, named after the schedule (Temporal adds the
// time), marked with the stack and the kind.
func (s *Starter) driftAction(stackID string) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:        contract.DriftScheduleID(stackID),
		Workflow:  workflows.DriftCheckWorkflow,
		Args:      []any{workflows.DriftInput{StackID: stackID}},
		TaskQueue: s.cfg.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.Kind.ValueSet(string(model.ExecDrift)), searchattr.Stack.ValueSet(stackID)),
		StaticSummary: "drift check of stack " + stackID,
	}
}

// SetDrift creates the stack's drift schedule (a Temporal Schedule, id
// contract.DriftScheduleID) or, when it exists, updates its interval,
// overlap policy and paused state. Repair is not the schedule's: the
// check reads it from the store. Two or three calls to Temporal.
func (s *Starter) SetDrift(ctx context.Context, stackID string, set model.DriftSettings) error {
	every, overlap, err := ParseDriftSettings(set)
	if err != nil {
		return err
	}
	id := contract.DriftScheduleID(stackID)
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}}
	sc := s.c.ScheduleClient()
	_, err = sc.Create(ctx, client.ScheduleOptions{
		ID: id, Spec: spec, Action: s.driftAction(stackID), Overlap: overlap, Paused: set.Paused,
		Note: "drift checks of stack " + stackID,
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) && !alreadyExists(err) {
		return fmt.Errorf("create drift schedule of stack %s: %w", stackID, err)
	}
	h := sc.GetHandle(ctx, id)
	err = h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		sched := in.Description.Schedule
		sched.Spec = &spec
		sched.Action = s.driftAction(stackID)
		if sched.Policy == nil {
			sched.Policy = &client.SchedulePolicies{}
		}
		sched.Policy.Overlap = overlap
		if sched.State == nil {
			sched.State = &client.ScheduleState{}
		}
		sched.State.Paused = set.Paused
		return &client.ScheduleUpdate{Schedule: &sched}, nil
	}})
	if err != nil {
		return fmt.Errorf("update drift schedule of stack %s: %w", stackID, err)
	}
	// The update may keep the paused state as it was: say it again.
	if set.Paused {
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: "paused through Cairn"})
	} else {
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "unpaused through Cairn"})
	}
	if err != nil {
		return fmt.Errorf("pause or unpause drift schedule of stack %s: %w", stackID, err)
	}
	return nil
}

// DescribeDrift returns the stack's drift schedule as Temporal has it
// (ErrNotFound when there is none): its id, interval, overlap policy,
// paused state and next check. Repair and the last check are the store's.
func (s *Starter) DescribeDrift(ctx context.Context, stackID string) (*model.Drift, error) {
	id := contract.DriftScheduleID(stackID)
	desc, err := s.c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if err != nil {
		return nil, notFoundOr(err, "drift schedule "+id)
	}
	d := &model.Drift{StackID: stackID, ScheduleID: id}
	if sp := desc.Schedule.Spec; sp != nil && len(sp.Intervals) > 0 {
		d.Every = sp.Intervals[0].Every.String()
	}
	d.Overlap = DefaultOverlap
	if p := desc.Schedule.Policy; p != nil {
		d.Overlap = overlapName(p.Overlap)
	}
	if st := desc.Schedule.State; st != nil {
		d.Paused = st.Paused
	}
	if next := desc.Info.NextActionTimes; len(next) > 0 && !d.Paused {
		at := next[0].UTC()
		d.NextCheckAt = &at
	}
	return d, nil
}

// DeleteDrift deletes the stack's drift schedule (ErrNotFound when there
// is none); a check already running finishes.
func (s *Starter) DeleteDrift(ctx context.Context, stackID string) error {
	id := contract.DriftScheduleID(stackID)
	if err := s.c.ScheduleClient().GetHandle(ctx, id).Delete(ctx); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return fmt.Errorf("%w: drift schedule %s", ErrNotFound, id)
		}
		return fmt.Errorf("delete drift schedule of stack %s: %w", stackID, err)
	}
	return nil
}
