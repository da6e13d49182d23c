package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
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
	cmd.RunE = showVerb(r, func(ctx context.Context, c *client.Client, args []string) (*model.Release, error) {
		in.Name = args[0]
		return c.CreateRelease(ctx, in)
	}, releaseDetails)
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
	cmd.RunE = showVerb(r, func(ctx context.Context, c *client.Client, args []string) (*model.Release, error) {
		return c.GetRelease(ctx, args[0])
	}, releaseDetails)
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
	cmd.RunE = listVerb(r, "releases", (*client.Client).ListReleases, releaseTable)
	return cmd
}

// releaseDetails prints one release as a table of one row.
func releaseDetails(w io.Writer, rel *model.Release) error {
	return releaseTable(w, []*model.Release{rel})
}

func releaseTable(w io.Writer, list []*model.Release) error {
	t := newTable(w, "ID", "NAME", "VERSION", "DESCRIPTION")
	for _, rel := range list {
		t.row(rel.ID, rel.Name, orDash(rel.Version), orDash(rel.Description))
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("print releases: %w", err)
	}
	return nil
}
