package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// newApprovalsCmd is `cairn stack approvals` or `cairn cluster approvals`:
// the four-eyes policy of a stack or cluster. what names the target
// ("stack", "cluster"); resolve turns the argument into its id.
func newApprovalsCmd(a *app, what string, t client.ApprovalTarget, resolve func(ctx context.Context, c *client.Client, arg string) (string, error)) *cobra.Command {
	arg, runs := "STACK", "apply of the stack"
	if what == "cluster" {
		arg, runs = "CLUSTER", "graph execution on the cluster"
	}
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "Four eyes: require approvals of every " + runs,
	}
	on := func(call func(ctx context.Context, c *client.Client, id string) (*model.ApprovalPolicy, error)) func(context.Context, *client.Client, []string) (*model.ApprovalPolicy, error) {
		return func(ctx context.Context, c *client.Client, args []string) (*model.ApprovalPolicy, error) {
			id, err := resolve(ctx, c, args[0])
			if err != nil {
				return nil, err
			}
			return call(ctx, c, id)
		}
	}

	var p model.ApprovalPolicy
	set := &cobra.Command{
		Use:     "set " + arg + " [--required N] [--author-may-approve]",
		Short:   "Require N distinct approvers (not the author) for every " + runs,
		Example: fmt.Sprintf("  cairn %s approvals set prod --required 2", what),
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, set, formatTable)
	set.RunE = showVerb(r, on(func(ctx context.Context, c *client.Client, id string) (*model.ApprovalPolicy, error) {
		return c.SetApprovals(ctx, t, id, p)
	}), approvalsTable)
	set.Flags().IntVar(&p.Required, "required", 1, fmt.Sprintf("distinct approvers needed (1 to %d)", model.MaxApprovers))
	set.Flags().BoolVar(&p.AuthorMayApprove, "author-may-approve", false, "let the principal who started an execution be one of its approvers")

	show := &cobra.Command{
		Use:   "show " + arg,
		Short: "Show the approvals required (404 when none are)",
		Args:  cobra.ExactArgs(1),
	}
	rs := newRemote(a, show, formatTable)
	show.RunE = showVerb(rs, on(func(ctx context.Context, c *client.Client, id string) (*model.ApprovalPolicy, error) {
		return c.Approvals(ctx, t, id)
	}), approvalsTable)

	clearCmd := &cobra.Command{
		Use:     "clear " + arg,
		Aliases: []string{"delete", "rm"},
		Short:   "Stop requiring approvals",
		Args:    cobra.ExactArgs(1),
	}
	rc := newRemote(a, clearCmd, formatTable)
	clearCmd.RunE = showVerb(rc, func(ctx context.Context, c *client.Client, args []string) (map[string]string, error) {
		id, err := resolve(ctx, c, args[0])
		if err != nil {
			return nil, err
		}
		return map[string]string{what: id}, c.ClearApprovals(ctx, t, id)
	}, func(w io.Writer, v map[string]string) error {
		_, err := fmt.Fprintf(w, "%s %s requires no approval any more\n", what, v[what])
		return err
	})
	cmd.AddCommand(set, show, clearCmd)
	return cmd
}

// approvalsTable prints a four-eyes policy.
func approvalsTable(w io.Writer, p *model.ApprovalPolicy) error {
	t := newTable(w)
	t.row("Required approvers:", fmt.Sprint(p.Required))
	t.row("Author may approve:", fmt.Sprint(p.AuthorMayApprove))
	return t.flush()
}

// stackIDOf resolves a stack name or id.
func stackIDOf(ctx context.Context, c *client.Client, arg string) (string, error) {
	st, err := resolveStack(ctx, c, arg)
	if err != nil {
		return "", err
	}
	return st.ID, nil
}

// clusterIDOf takes a cluster id as it is.
func clusterIDOf(_ context.Context, _ *client.Client, arg string) (string, error) { return arg, nil }
