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

func newStackCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stack",
		Short: "Create, list, show and delete stacks (the record of what a package created)",
	}
	cmd.AddCommand(newStackCreateCmd(a), newStackListCmd(a), newStackShowCmd(a), newStackDeleteCmd(a), newStackDriftCmd(a),
		newApprovalsCmd(a, "stack", client.StackApprovals, stackIDOf))
	return cmd
}

func newStackCreateCmd(a *app) *cobra.Command {
	var in model.StackInput
	cmd := &cobra.Command{
		Use:     "create NAME [--description TEXT] [--url URL]...",
		Short:   "Create a stack",
		Long:    "Create records a new, empty stack. Its URLs, when given, are where `cairn apply` without\nfiles reads the package from.",
		Example: "  cairn stack create web --description 'the web tier' --url https://example.com/web.yaml",
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = showVerb(r, func(ctx context.Context, c *client.Client, args []string) (*model.StackRecord, error) {
		in.Name = args[0]
		return c.CreateStack(ctx, in)
	}, func(w io.Writer, st *model.StackRecord) error { return stackTable(w, []model.StackRecord{*st}) })
	cmd.Flags().StringVar(&in.Description, "description", "", "what the stack is for")
	cmd.Flags().StringArrayVar(&in.URLs, "url", nil, "`URL` of a package to apply; repeatable")
	return cmd
}

func newStackListCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List stacks",
		Args:    cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = listVerb(r, "stacks", (*client.Client).ListStacks, stackTable)
	return cmd
}

func stackTable(w io.Writer, list []model.StackRecord) error {
	t := newTable(w, "ID", "NAME", "RESOURCES", "CREATED", "UPDATED", "DESCRIPTION")
	for _, s := range list {
		t.row(s.ID, s.Name, fmt.Sprint(len(s.Resources)), formatTime(s.CreatedAt), formatTime(s.UpdatedAt), orDash(s.Description))
	}
	return t.flush()
}

func newStackShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show STACK",
		Short: "Show a stack record and the resources it manages (by id or name)",
		Args:  cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		st, err := resolveStack(cmd.Context(), c, args[0])
		if err != nil {
			return apiFailure(a, err, nil)
		}
		drift := stackDrift(cmd.Context(), c, st.ID)
		return r.print(st, func(w io.Writer) error {
			if err := stackDetails(w, st); err != nil || drift == nil {
				return err
			}
			fmt.Fprintln(w)
			return driftDetails(w, drift)
		})
	}
	return cmd
}

func stackDetails(w io.Writer, st *model.StackRecord) error {
	t := newTable(w)
	t.row("ID:", st.ID)
	t.row("Name:", st.Name)
	t.row("Description:", orDash(st.Description))
	t.row("URLs:", orDash(strings.Join(st.URLs, ", ")))
	t.row("Created:", formatTime(st.CreatedAt))
	t.row("Updated:", formatTime(st.UpdatedAt))
	t.row("Package:", orDash(st.SnapshotHash))
	t.row("Cluster:", orDash(st.ClusterID))
	t.row("Resources:", fmt.Sprint(len(st.Resources)))
	if err := t.flush(); err != nil {
		return err
	}
	if len(st.Resources) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	rt := newTable(w, "KIND", "NAME", "ID", "NODE", "ASSOCIATIONS")
	for _, res := range st.Resources {
		assoc := make([]string, len(res.Associations))
		for i, as := range res.Associations {
			assoc[i] = as.Kind + "/" + as.PkgName
		}
		rt.row(res.Kind, res.PkgName, orDash(res.ID), orDash(res.Node), orDash(strings.Join(assoc, ", ")))
	}
	return rt.flush()
}

func newStackDeleteCmd(a *app) *cobra.Command {
	var (
		wait bool
		opts client.DeleteOptions
	)
	cmd := &cobra.Command{
		Use:   "delete STACK",
		Short: "Delete a stack: destroy every resource it records, then the record",
		Long: "Delete starts a destroy execution that deletes the stack's resources in reverse\n" +
			"dependency order and follows it with a progress bar; once nothing is left the server\n" +
			"removes the stack record. --wait=false prints the execution id and returns.",
		Aliases: []string{"rm", "destroy"},
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		c, st, err := r.stack(ctx, args[0])
		if err != nil {
			return err
		}
		ex, err := c.DeleteStack(ctx, st.ID, opts)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.started(ctx, c, ex, wait, exitPlain)
	}
	cmd.Flags().BoolVar(&wait, "wait", true, "follow the destroy to its end; --wait=false prints its id and returns")
	cmd.Flags().StringVar(&opts.Cluster, "cluster", "", "the cluster whose nodes hold the stack's targeted resources")
	r.out.registerColor(cmd.Flags())
	return cmd
}
