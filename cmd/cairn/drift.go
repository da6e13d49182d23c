package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

func newStackDriftCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Schedule drift checks of a stack: a dry-run of its last applied package, repaired on demand",
	}
	cmd.AddCommand(newDriftSetCmd(a), newDriftShowCmd(a), newDriftDeleteCmd(a))
	return cmd
}

func newDriftSetCmd(a *app) *cobra.Command {
	var set model.DriftSettings
	cmd := &cobra.Command{
		Use:   "set STACK --every DURATION [--repair] [--watch] [--pause] [--overlap POLICY]",
		Short: "Create or replace a stack's drift schedule (a Temporal Schedule)",
		Long: "Set checks the stack every DURATION for drift: what its last applied package would change now.\n" +
			"With --repair a drift is applied away, unless another apply or destroy holds the stack.\n" +
			"With --watch the server also watches the stack's files and directories and checks those that change at once.",
		Example: "  cairn stack drift set web --every 10m --repair",
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = showVerb(r, onStack(func(ctx context.Context, c *client.Client, st *model.StackRecord) (*model.Drift, error) {
		return c.SetDrift(ctx, st.ID, set)
	}), driftDetails)
	cmd.Flags().StringVar(&set.Every, "every", "", "`DURATION` between checks, such as 10m (required)")
	cmd.Flags().BoolVar(&set.Repair, "repair", false, "apply the last package again when the stack drifted")
	cmd.Flags().BoolVar(&set.Watch, "watch", false, "also watch the stack's files and directories and check (and repair) those that change within a second")
	cmd.Flags().BoolVar(&set.Paused, "pause", false, "create or leave the schedule paused")
	cmd.Flags().StringVar(&set.Overlap, "overlap", "", "Temporal overlap `POLICY` (skip by default, buffer_one, buffer_all, cancel_other, terminate_other, allow_all)")
	_ = cmd.MarkFlagRequired("every")
	return cmd
}

func newDriftShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show STACK",
		Short: "Show a stack's drift schedule and its last check with each drifted resource's diff",
		Args:  cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = showVerb(r, onStack(func(ctx context.Context, c *client.Client, st *model.StackRecord) (*model.Drift, error) {
		return c.GetDrift(ctx, st.ID)
	}), driftDetails)
	return cmd
}

func newDriftDeleteCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "delete STACK",
		Aliases: []string{"rm"},
		Short:   "Delete a stack's drift schedule",
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = showVerb(r, onStack(func(ctx context.Context, c *client.Client, st *model.StackRecord) (map[string]string, error) {
		return map[string]string{"deleted": st.ID}, c.DeleteDrift(ctx, st.ID)
	}), func(w io.Writer, deleted map[string]string) error {
		_, err := fmt.Fprintf(w, "drift schedule of stack %s deleted\n", deleted["deleted"])
		return err
	})
	return cmd
}

// stackDrift is the stack's drift schedule for `stack show`: nil when it
// has none or the server cannot tell (no Temporal, an older server), which
// leaves the stack's own details to print.
func stackDrift(ctx context.Context, c *client.Client, stackID string) *model.Drift {
	d, err := c.GetDrift(ctx, stackID)
	if err != nil {
		return nil
	}
	return d
}

// driftDetails prints a drift schedule, its last check and each drifted
// resource with its changed attributes.
func driftDetails(w io.Writer, d *model.Drift) error {
	t := newTable(w)
	t.row("Drift schedule:", d.ScheduleID)
	state := "every " + d.Every
	if d.Paused {
		state += " (paused)"
	}
	t.row("Checks:", state)
	t.row("Repair:", fmt.Sprint(d.Repair))
	t.row("Watch:", fmt.Sprint(d.Watch))
	t.row("Overlap:", d.Overlap)
	if d.NextCheckAt != nil {
		t.row("Next check:", formatTime(*d.NextCheckAt))
	}
	l := d.LastCheck
	if l == nil {
		t.row("Last check:", "-")
		return t.flush()
	}
	result := "no drift"
	switch {
	case l.Error != "":
		result = "error: " + l.Error
	case l.Drifted:
		result = fmt.Sprintf("drifted (%d resources)", len(l.Resources))
	}
	t.row("Last check:", formatTime(l.CheckedAt)+" "+l.ExecutionID)
	t.row("Result:", result)
	if l.Repair != nil {
		t.row("Repair:", strings.TrimSpace(l.Repair.Status+" "+l.Repair.ExecutionID+" "+l.Repair.Reason))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(l.Resources) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	rt := newTable(w, "RESOURCE", "ACTION", "CHANGES")
	for _, res := range l.Resources {
		changes := make([]string, len(res.Changes))
		for i, ch := range res.Changes {
			changes[i] = ch.Path
		}
		rt.row(res.ID, string(res.Action), orDash(strings.Join(changes, ", ")))
	}
	return rt.flush()
}
