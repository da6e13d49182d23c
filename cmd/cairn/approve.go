package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// approvalFlags are apply's --approve-required and --approval-timeout.
type approvalFlags struct {
	required bool
	timeout  time.Duration
}

func (f *approvalFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&f.required, "approve-required", false, "plan only, print the plan and the execution id, and apply it once approved (cairn exec approve ID)")
	fs.DurationVar(&f.timeout, "approval-timeout", 0, "with --approve-required: end the plan unapplied when nobody decided within this long (e.g. 72h)")
}

func (f *approvalFlags) check() error {
	if f.timeout < 0 {
		return fmt.Errorf("--approval-timeout %s: want a positive duration", f.timeout)
	}
	if f.timeout > 0 && !f.required {
		return fmt.Errorf("--approval-timeout goes with --approve-required")
	}
	return nil
}

// awaitingApproval reports a plan apply --approve-required started: once
// it awaits approval (or ended) it prints the plan as `cairn plan` does,
// with the execution id and how to approve or reject it, and returns.
// Exit codes follow plan's: 1 when the plan cannot be approved, else with
// --detailed-exitcode(s) 2 when it has changes.
func (r *remote) awaitingApproval(ctx context.Context, c *client.Client, st *model.StackRecord, ex *model.Execution, detailed bool) error {
	if ex.Awaiting == "" && !ex.Finished() {
		var err error
		if ex, err = c.WaitFor(ctx, ex.ID, r.poll, func(e *model.Execution) bool { return e.Awaiting != "" || e.Finished() }); err != nil {
			return apiFailure(r.a, err, nil)
		}
	}
	plan, err := planOf(ex)
	if err != nil {
		return &exitError{code: exitFailure, err: err}
	}
	if err := r.print(ex, func(w io.Writer) error {
		printPlan(w, palette{on: r.out.useColor(w)}, st, plan)
		return nil
	}); err != nil {
		return err
	}
	if ex.Awaiting != "approval" {
		why := "it ended " + string(ex.Status)
		if a := ex.Approval; a != nil && a.Reason != "" {
			why += ": " + a.Reason
		} else if ex.Error != "" {
			why += ": " + ex.Error
		}
		return &exitError{code: exitFailure, err: fmt.Errorf("the plan %s cannot be approved: %s", ex.ID, why)}
	}
	hint := r.a.stdout
	if !r.table() {
		hint = r.a.stderr
	}
	fmt.Fprintf(hint, "\nExecution %s awaits approval%s.\n", ex.ID, approvalDeadline(ex.Approval))
	if a := ex.Approval; a != nil && a.Required > 0 {
		fmt.Fprintf(hint, "It needs %d approval(s) (%d given) by %s", a.Required, len(a.Approvals), a.MayApprove)
		if !a.AuthorMayApprove {
			fmt.Fprintf(hint, ", not its author")
		}
		fmt.Fprintln(hint, ".")
	}
	fmt.Fprintf(hint, "Approve it with: cairn exec approve %s [--comment TEXT]\n", ex.ID)
	fmt.Fprintf(hint, "Reject it with:  cairn exec reject %s [--comment TEXT]\n", ex.ID)
	return planExit(plan, detailed)
}

func approvalDeadline(a *model.Approval) string {
	if a == nil || a.Deadline == nil {
		return ""
	}
	return " until " + formatTime(*a.Deadline) + " UTC"
}

func newExecApproveCmd(a *app) *cobra.Command {
	return newApprovalCmd(a, true, &cobra.Command{
		Use:   "approve ID [--comment TEXT]",
		Short: "Approve a plan awaiting approval (cairn apply --approve-required): apply exactly what it showed",
		Long: "Approve checks that the plan still holds (no apply or destroy landed on the stack since,\n" +
			"and every planned resource reads as it did) and starts its apply, printing that apply's\n" +
			"id. When something moved it refuses (exit 1), naming what moved, and the plan ends\n" +
			"having changed nothing: plan again. The approver is the name of the API token used.",
		Example: "  cairn exec approve dryrun-web.0197… --comment 'ship it'",
	})
}

func newExecRejectCmd(a *app) *cobra.Command {
	return newApprovalCmd(a, false, &cobra.Command{
		Use:     "reject ID [--comment TEXT]",
		Short:   "Reject a plan awaiting approval: it ends having changed nothing",
		Example: "  cairn exec reject dryrun-web.0197… --comment 'not during the freeze'",
	})
}

// newApprovalCmd is exec approve (approve) or exec reject.
func newApprovalCmd(a *app, approve bool, cmd *cobra.Command) *cobra.Command {
	var comment string
	cmd.Args = cobra.ExactArgs(1)
	r := newRemote(a, cmd, formatTable)
	cmd.Flags().StringVar(&comment, "comment", "", "why, recorded with the decision")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		decide := c.Reject
		if approve {
			decide = c.Approve
		}
		res, err := decide(cmd.Context(), args[0], comment)
		if err != nil {
			return approvalFailure(a, args[0], err)
		}
		return r.print(res, func(w io.Writer) error {
			fmt.Fprintf(w, "%s %s%s\n", args[0], res.Status, byWhom(res.By))
			if res.ApplyExecutionID != "" {
				fmt.Fprintf(w, "applying as %s; follow it with: cairn exec watch %s\n", res.ApplyExecutionID, res.ApplyExecutionID)
			}
			return nil
		})
	}
	return cmd
}

// approvalFailure is apiFailure for exec approve and reject: a 409 whose
// plan moved lists what moved, one line each, and says the plan ended.
func approvalFailure(a *app, id string, err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		var moved model.ErrorBody
		if json.Unmarshal(ae.Body, &moved) == nil && (moved.MovedBy != "" || moved.MovedCount > 0) {
			fmt.Fprintf(a.stderr, "The plan %s no longer holds; what moved since it was made:\n", id)
			if moved.MovedBy != "" {
				fmt.Fprintf(a.stderr, "  stack: execution %s was recorded on it\n", moved.MovedBy)
			}
			for _, m := range moved.Moved {
				fmt.Fprintf(a.stderr, "  %s\n", m)
			}
			if more := moved.MovedCount - len(moved.Moved); more > 0 {
				fmt.Fprintf(a.stderr, "  and %d more\n", more)
			}
			fmt.Fprintln(a.stderr, "Nothing was changed and the plan ended: plan again (cairn apply --approve-required).")
		}
	}
	return apiFailure(a, err, nil)
}

func byWhom(by string) string {
	if by == "" {
		return ""
	}
	return " by " + by
}

// approvalRows adds an execution's awaiting state and approval to exec
// show's table.
func approvalRows(t *table, ex *model.Execution) {
	if ex.Awaiting != "" {
		t.row("Awaiting:", ex.Awaiting+approvalDeadline(ex.Approval))
	}
	ap := ex.Approval
	if ap == nil {
		return
	}
	line := string(ap.Status) + byWhom(ap.By)
	if ap.At != nil {
		line += " at " + formatTime(*ap.At)
	}
	t.row("Approval:", line)
	if ap.Comment != "" {
		t.row("Comment:", ap.Comment)
	}
	if ap.Reason != "" {
		t.row("Reason:", ap.Reason)
	}
	if ap.ApplyExecutionID != "" {
		t.row("Applied by:", ap.ApplyExecutionID)
	}
	fourEyesRows(t, ap)
}

// fourEyesRows adds a four-eyes policy's state: approvals given of those
// required, each with who, when and why, the author and who may approve.
func fourEyesRows(t *table, ap *model.Approval) {
	if ap.Required == 0 {
		return
	}
	t.row("Approvals:", fmt.Sprintf("%d of %d", len(ap.Approvals), ap.Required))
	for _, v := range ap.Approvals {
		line := v.By + " at " + formatTime(v.At)
		if v.Comment != "" {
			line += ": " + v.Comment
		}
		t.row("  approved:", line)
	}
	author := ap.Author
	if author == "" {
		author = "(the anonymous token)"
	}
	if !ap.AuthorMayApprove {
		author += " (may not approve)"
	}
	t.row("Author:", author)
	if ap.MayApprove != "" {
		t.row("May approve:", ap.MayApprove)
	}
	if ap.Policy != "" {
		t.row("Policy:", ap.Policy)
	}
}

// approvalPlan prints, after exec show's table, the plan of a plan that
// awaits (or awaited) approval, as `cairn plan` shows it.
func approvalPlan(w io.Writer, ex *model.Execution) {
	if ex.Approval == nil || ex.Plan == nil {
		return
	}
	plan, err := planOf(ex)
	if err != nil {
		return
	}
	fmt.Fprintln(w)
	printPlanBody(w, palette{}, plan)
	if ex.Awaiting != "" {
		fmt.Fprintf(w, "Approve with: cairn exec approve %s; reject with: cairn exec reject %s\n", ex.ID, ex.ID)
	}
}

// listedStatus is an execution's status in exec list: "waiting (approval)"
// for a plan awaiting approval, "waiting (decision)" for a paused step.
func listedStatus(e *model.Execution) string {
	if e.Awaiting != "" {
		return fmt.Sprintf("%s (%s)", e.Status, e.Awaiting)
	}
	return string(e.Status)
}
