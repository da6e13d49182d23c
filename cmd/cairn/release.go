package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/model"
)

func newReleaseCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Create, show and list releases (the lowest graph layer; Fuel's releases)",
	}
	cmd.AddCommand(newReleaseCreateCmd(a), newReleaseShowCmd(a), newReleaseListCmd(a))
	return cmd
}

func newReleaseCreateCmd(a *app) *cobra.Command {
	var in model.ReleaseInput
	cmd := &cobra.Command{
		Use:   "create NAME [--id ID] [--version VERSION] [--description TEXT]",
		Short: "Create a release",
		Long: "Create stores a release. Its --version (Fuel's \"2015.1.0-8.0\") is the value of the\n" +
			"{OPENSTACK_VERSION} placeholder in the graphs of clusters of this release.",
		Example: "  cairn release create liberty --id liberty-8.0 --version 2015.1.0-8.0",
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		in.Name = args[0]
		rel, err := c.CreateRelease(cmd.Context(), in)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(rel, func(w io.Writer) error { return releaseTable(w, []model.Release{*rel}) })
	}
	f := cmd.Flags()
	f.StringVar(&in.ID, "id", "", "the release `ID` (default: generated)")
	f.StringVar(&in.Version, "version", "", "the release's `VERSION` ({OPENSTACK_VERSION})")
	f.StringVar(&in.Description, "description", "", "a description")
	return cmd
}

func newReleaseShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a release",
		Args:  cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		rel, err := c.GetRelease(cmd.Context(), args[0])
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(rel, func(w io.Writer) error { return releaseTable(w, []model.Release{*rel}) })
	}
	return cmd
}

func newReleaseListCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List releases",
		Aliases: []string{"ls"},
		Args:    cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		list, err := c.ListReleases(cmd.Context())
		if err != nil {
			return apiFailure(a, err, nil)
		}
		if list == nil {
			list = []model.Release{}
		}
		return r.print(map[string]any{"releases": list}, func(w io.Writer) error { return releaseTable(w, list) })
	}
	return cmd
}

func releaseTable(w io.Writer, list []model.Release) error {
	t := newTable(w, "ID", "NAME", "VERSION", "DESCRIPTION")
	for _, rel := range list {
		t.row(rel.ID, rel.Name, orDash(rel.Version), orDash(rel.Description))
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("print releases: %w", err)
	}
	return nil
}
