package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

func newExecCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "exec",
		Aliases: []string{"execution", "executions"},
		Short:   "List, show, watch, retry, cancel, decide, approve and reject executions (Temporal workflows)",
	}
	cmd.AddCommand(newExecListCmd(a), newExecShowCmd(a), newExecWatchCmd(a), newExecRetryCmd(a),
		newExecCancelCmd(a), newExecDecideCmd(a), newExecApproveCmd(a), newExecRejectCmd(a))
	return cmd
}

func newExecListCmd(a *app) *cobra.Command {
	var (
		f        client.ExecutionFilter
		kind     string
		status   string
		stackRef string
	)
	cmd := &cobra.Command{
		Use:     "list [--stack STACK] [--cluster ID] [--kind KIND] [--status STATUS] [--limit N]",
		Aliases: []string{"ls"},
		Short:   "List executions, newest first",
		Args:    cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		c, err := r.client()
		if err != nil {
			return err
		}
		f.Kind, f.Status = model.ExecutionKind(kind), model.ExecutionStatus(status)
		if stackRef != "" {
			st, err := resolveStack(ctx, c, stackRef)
			if err != nil {
				return apiFailure(a, err, nil)
			}
			f.Stack = st.ID
		}
		list, err := c.ListExecutions(ctx, f)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		if list.Executions == nil {
			list.Executions = []model.Execution{}
		}
		return r.print(list, func(w io.Writer) error {
			if err := executionTable(w, list.Executions); err != nil {
				return err
			}
			if list.NextPageToken != "" {
				fmt.Fprintf(r.a.stderr, "more: --page-token %s\n", list.NextPageToken)
			}
			return nil
		})
	}
	fs := cmd.Flags()
	fs.StringVar(&stackRef, "stack", "", "executions of this stack (id or name)")
	fs.StringVar(&f.Cluster, "cluster", "", "executions on this cluster")
	fs.StringVar(&kind, "kind", "", "apply, dry-run, graph or destroy")
	fs.StringVar(&status, "status", "", "running, waiting (for a decision or an approval), completed, failed, rolled_back, canceled or rejected (plans that ended unapplied)")
	fs.IntVar(&f.Limit, "limit", 0, "at most this many (default: the server's page size)")
	fs.StringVar(&f.PageToken, "page-token", "", "continue a previous listing")
	return cmd
}

func executionTable(w io.Writer, list []model.Execution) error {
	t := newTable(w, "ID", "KIND", "STATUS", "TARGET", "STARTED", "DURATION")
	for _, e := range list {
		t.row(e.ID, string(e.Kind), listedStatus(&e), executionTarget(&e), formatTimePtr(e.StartedAt), executionDuration(&e))
	}
	return t.flush()
}

// executionTarget names what an execution works on.
func executionTarget(e *model.Execution) string {
	switch {
	case e.StackID != "":
		return "stack " + e.StackID
	case e.ClusterID != "":
		return "cluster " + e.ClusterID
	}
	return "-"
}

func executionDuration(e *model.Execution) string {
	if e.StartedAt == nil || e.ClosedAt == nil {
		return "-"
	}
	return formatDuration(e.ClosedAt.Sub(*e.StartedAt))
}

func newExecShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show an execution: status, every step, its report or plan, and a plan's approval",
		Args:  cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	var level string
	cmd.Flags().StringVar(&level, "log-level", string(model.LevelNotice), "show the steps' messages at this level and above: debug, info, notice, warning or err")
	cmd.RunE = showVerb(r, func(ctx context.Context, c *client.Client, args []string) (*model.Execution, error) {
		min, err := model.ParseLogLevel(level)
		if err != nil {
			return nil, fmt.Errorf("--log-level: %w", err)
		}
		ex, err := c.GetExecution(ctx, args[0])
		if err != nil {
			return nil, err
		}
		filterStepLogs(ex.Steps, min)
		return ex, nil
	}, executionDetails)
	return cmd
}

func executionDetails(w io.Writer, ex *model.Execution) error {
	t := newTable(w)
	t.row("ID:", ex.ID)
	t.row("Kind:", string(ex.Kind))
	t.row("Status:", string(ex.Status))
	approvalRows(t, ex)
	t.row("Target:", executionTarget(ex))
	if ex.RetryOf != "" {
		t.row("Retry of:", ex.RetryOf)
	}
	t.row("Started:", formatTimePtr(ex.StartedAt))
	t.row("Closed:", formatTimePtr(ex.ClosedAt))
	t.row("Duration:", executionDuration(ex))
	if p := ex.Progress; p != nil {
		line := fmt.Sprintf("%d/%d steps done, %d running", p.Done, p.Total, p.Running)
		if len(p.Waiting) > 0 {
			line += ", waiting: " + strings.Join(p.Waiting, ", ")
		}
		t.row("Progress:", line)
	}
	if ex.Error != "" {
		t.row("Error:", ex.Error)
	}
	t.row("Workflow:", ex.WorkflowID+" "+ex.RunID)
	if ex.UIURL != "" {
		t.row("Temporal UI:", ex.UIURL)
	}
	if r := ex.Report; r != nil {
		line := fmt.Sprintf("%d created, %d updated, %d deleted, %d unchanged, %d failed, %d skipped",
			r.Created, r.Updated, r.Deleted, r.Unchanged, r.Failed, r.Skipped)
		if r.Unknown > 0 {
			line += fmt.Sprintf(", %d unknown", r.Unknown)
		}
		if r.Refreshed > 0 {
			line += fmt.Sprintf(" (%d refreshed)", r.Refreshed)
		}
		t.row("Report:", line)
		if msgs := logCounts(r.Log); msgs != "" {
			t.row("Messages:", msgs)
		}
	}
	if p := ex.Plan; p != nil {
		s := p.Summary
		t.row("Plan:", fmt.Sprintf("%d to create, %d to update, %d to delete, %d to run, %d unchanged", s.Create, s.Update, s.Delete, s.Run, s.Noop))
	}
	if err := t.flush(); err != nil {
		return err
	}
	approvalPlan(w, ex)
	if len(ex.Steps) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	st := newTable(w, "STEP", "NODE", "ACTION", "STATUS", "ATTEMPTS", "DURATION", "ERROR")
	for _, s := range ex.Steps {
		took := "-"
		if s.StartedAt != nil && s.EndedAt != nil {
			took = formatDuration(s.EndedAt.Sub(*s.StartedAt))
		}
		st.row(s.ID, orDash(s.Node), orDash(string(s.Action)), string(s.Status), fmt.Sprint(s.Attempts), took, orDash(s.Error))
	}
	if err := st.flush(); err != nil {
		return err
	}
	printUnknownSteps(w, ex)
	printStepOutputs(w, ex.Steps)
	printStepLogs(w, ex.Steps)
	return nil
}

// printUnknownSteps explains each step whose outcome is unknown and, while
// the execution waits, the decisions it takes.
func printUnknownSteps(w io.Writer, ex *model.Execution) {
	for _, s := range ex.Steps {
		if s.Status != model.StatusUnknown {
			continue
		}
		fmt.Fprintf(w, "\n%s is unknown: the command may or may not have run (its worker stopped before recording the outcome).\n", s.ID)
		if ex.Status == model.ExecWaiting {
			fmt.Fprintf(w, "  retry runs it again, skip takes it as done, rollback or abort stop:\n  cairn exec decide %s --step %s --action retry|skip|rollback|abort\n", ex.ID, s.ID)
		}
	}
}

// printStepOutputs prints what each step's program printed (its output
// change), indented under the step's id.
func printStepOutputs(w io.Writer, steps []model.StepProgress) {
	for _, s := range steps {
		for _, c := range s.Changes {
			text, ok := c.New.(string)
			if c.Path != model.OutputChange || !ok || text == "" {
				continue
			}
			fmt.Fprintf(w, "\nOutput of %s:\n", s.ID)
			for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				fmt.Fprintln(w, "  "+line)
			}
		}
	}
}

func newExecWatchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow an execution live to its end, then print its report",
		Long: "Watch follows an execution's events with a progress bar and a line per step, then\n" +
			"prints the report. It exits 0 when the execution completed, 1 otherwise.",
		Args: cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	r.out.registerColor(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		return r.followAndReport(cmd.Context(), c, args[0], exitPlain)
	}
	return cmd
}

func newExecRetryCmd(a *app) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "retry ID",
		Short: "Run a failed or canceled execution again, as a new execution linked to it",
		Long: "Retry starts a new execution with the same input as a finished, unsuccessful one;\n" +
			"steps that were done come back unchanged. It prints the new execution's id, or with\n" +
			"--wait follows it to its end.",
		Args: cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	r.out.registerColor(cmd.Flags())
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the new execution to its end")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		ex, err := c.Retry(cmd.Context(), args[0])
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.started(cmd.Context(), c, ex, wait, exitPlain)
	}
	return cmd
}

func newExecCancelCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Ask a running execution to stop (an apply then rolls back what it changed)",
		Args:  cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = showVerb(r, func(ctx context.Context, c *client.Client, args []string) (*model.Execution, error) {
		return c.Cancel(ctx, args[0])
	}, func(w io.Writer, ex *model.Execution) error {
		_, err := fmt.Fprintf(w, "cancel requested for %s (status %s)\n", ex.ID, ex.Status)
		return err
	})
	return cmd
}

var decisionActions = []model.Decision{model.DecisionRetry, model.DecisionSkip, model.DecisionRollback, model.DecisionAbort}

func newExecDecideCmd(a *app) *cobra.Command {
	var d model.DecisionRequest
	var action string
	var steps []string
	cmd := &cobra.Command{
		Use:   "decide ID [retry|skip|rollback|abort] [--step STEP]... [--all]",
		Short: "Answer an execution paused on failed steps (--on-failure pause)",
		Long: "Decide tells a paused execution what to do with the steps that wait: retry them, skip\n" +
			"them (their dependents run), roll back everything done so far, or abort (stop, keep what\n" +
			"is done). The action is the second argument or --action. --step picks a waiting step and\n" +
			"may repeat to decide several at once; --all decides every step waiting; with neither the\n" +
			"first waiting step is decided. A --step that does not wait changes nothing.",
		Example: "  cairn exec decide EXEC retry --step node-1/task --step node-2/task\n" +
			"  cairn exec decide EXEC skip --all",
		Args: cobra.RangeArgs(1, 2),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		given := "--action"
		if len(args) == 2 {
			if action != "" && action != args[1] {
				return fmt.Errorf("action %q and --action %q disagree", args[1], action)
			}
			action, given = args[1], "action"
		}
		d.Action = model.Decision(action)
		if !slices.Contains(decisionActions, d.Action) {
			return fmt.Errorf("%s %q: want retry, skip, rollback or abort", given, action)
		}
		switch {
		case d.All && len(steps) > 0:
			return errors.New("give --step or --all, not both")
		case len(steps) == 1:
			d.Step = steps[0]
		case len(steps) > 1:
			d.Steps = steps
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		res, err := c.Decide(cmd.Context(), args[0], d)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(res, func(w io.Writer) error { return printDecision(w, res) })
	}
	cmd.Flags().StringVar(&action, "action", "", "retry, skip, rollback or abort (or give it as the second argument)")
	cmd.Flags().StringArrayVar(&steps, "step", nil, "a waiting step to decide; repeat for several")
	cmd.Flags().BoolVar(&d.All, "all", false, "decide every step waiting now")
	return cmd
}

// printDecision writes a line "STEP: ACTION" per step a decision applied
// to, and says when it acted on the whole execution (rollback, abort).
func printDecision(w io.Writer, res *model.DecisionResult) error {
	steps := res.Steps
	if len(steps) == 0 && res.Step != "" {
		steps = []string{res.Step}
	}
	for _, s := range steps {
		if _, err := fmt.Fprintf(w, "%s: %s\n", s, res.Action); err != nil {
			return err
		}
	}
	if res.Scope == model.DecisionScopeExecution {
		_, err := fmt.Fprintf(w, "%s applies to the whole execution\n", res.Action)
		return err
	}
	return nil
}
