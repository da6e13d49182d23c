package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/server"
)

// kindsFlags locate the catalogue `cairn kinds` reads: the built-in kinds
// and Fuel task types plus the kinds defined in a directory.
type kindsFlags struct {
	dir string
	out outputFlags
}

func (f *kindsFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.dir, "kinds-dir", os.Getenv("CAIRN_KINDS_DIR"), "directory of kind definitions (kind: Kind documents; default $CAIRN_KINDS_DIR)")
	f.out.register(fs, formatTable)
}

// catalogue reads the catalogue offline, as the server builds it.
func (f *kindsFlags) catalogue() (*kinds.Catalogue, error) {
	if err := f.out.check(); err != nil {
		return nil, err
	}
	return server.Catalogue(f.dir)
}

func newKindsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kinds",
		Short: "List and describe resource kinds and Fuel task types (puppet describe)",
		Long: "Kinds reads the catalogue offline: the built-in kinds, the Fuel task types mapped onto\n" +
			"them and the kinds defined in --kinds-dir ($CAIRN_KINDS_DIR). The server answers the\n" +
			"same at GET /v1/kinds and GET /v1/kinds/{name}.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newKindsListCmd(a), newKindsDescribeCmd(a))
	return cmd
}

func newKindsListCmd(a *app) *cobra.Command {
	var f kindsFlags
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the kinds and task types with what each is",
		Example: "  cairn kinds list\n  cairn kinds list --kinds-dir examples/platform/kinds -o json",
		Args:    cobra.NoArgs,
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cat, err := f.catalogue()
		if err != nil {
			return err
		}
		all := cat.DescribeAll()
		if f.out.format != formatTable {
			return printData(a.stdout, f.out.format, map[string]any{"kinds": all})
		}
		t := newTable(a.stdout, "NAME", "TYPE", "BASE", "DESCRIPTION")
		for _, d := range all {
			t.row(d.Name, d.Type, orDash(d.Base), d.Description)
		}
		return t.flush()
	}
	f.register(cmd)
	return cmd
}

func newKindsDescribeCmd(a *app) *cobra.Command {
	var f kindsFlags
	cmd := &cobra.Command{
		Use:     "describe KIND",
		Short:   "Describe a kind or task type: its attributes, their kind, type and docs, its auto-edges",
		Example: "  cairn kinds describe exec\n  cairn kinds describe puppet -o yaml",
		Args:    cobra.ExactArgs(1),
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cat, err := f.catalogue()
		if err != nil {
			return err
		}
		d, ok := cat.Describe(args[0])
		if !ok {
			return cat.DescribeError(args[0])
		}
		if f.out.format != formatTable {
			return printData(a.stdout, f.out.format, d)
		}
		return printDescription(a.stdout, d)
	}
	f.register(cmd)
	return cmd
}

// printDescription writes a kind's description for people.
func printDescription(w io.Writer, d kinds.Description) error {
	head := d.Name + " (" + d.Type
	if d.Base != "" {
		head += " on " + d.Base
	}
	if d.Structural {
		head += ", structural"
	}
	fmt.Fprintln(w, head+")")
	if d.Description != "" {
		fmt.Fprintln(w, "  "+d.Description)
	}
	if len(d.TaskTypes) > 0 {
		fmt.Fprintf(w, "Task types mapped onto it: %s\n", strings.Join(d.TaskTypes, ", "))
	}
	if d.Wrap != "" {
		fmt.Fprintf(w, "Spec goes into the base's %q\n", d.Wrap)
	}
	if len(d.Attributes) > 0 {
		fmt.Fprintln(w, "\nAttributes:")
		t := newTable(w, "  NAME", "KIND", "TYPE", "REQUIRED", "DEFAULT", "DOC")
		for _, at := range d.Attributes {
			req, def := "", ""
			if at.Required {
				req = "yes"
			}
			if at.Default != nil {
				def = fmt.Sprint(at.Default)
			}
			t.row("  "+at.Name, string(at.Kind), orDash(at.Type), orDash(req), orDash(def), at.Doc)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(d.AutoEdges) > 0 {
		fmt.Fprintln(w, "\nAuto-edges:")
		for _, e := range d.AutoEdges {
			fmt.Fprintf(w, "  %s %s whose %s is %s its %s%s\n", autoEdgeVerb(e), e.Kind, e.Attr,
				map[string]string{kinds.MatchEqual: "equal to", kinds.MatchParentPath: "a parent of"}[e.Match], e.From, autoEdgeRefresh(e))
		}
	}
	if d.Structural || d.Type == kinds.TypeTaskType {
		return nil // Fuel tasks take no notify or subscribe
	}
	fmt.Fprint(w, "\nRefresh: ")
	if d.Refresh == "" {
		fmt.Fprintln(w, "ignored (a notify or subscribe only orders it)")
	} else {
		fmt.Fprintln(w, d.Refresh)
	}
	return nil
}

// autoEdgeVerb says which way an auto-edge orders: Puppet's autorequire
// (runs after) or autobefore (runs before).
func autoEdgeVerb(e kinds.AutoEdge) string {
	if e.Before() {
		return "runs before"
	}
	return "runs after"
}

// autoEdgeRefresh says whether an auto-edge refreshes: autosubscribe (it
// is refreshed by the other's change) or autonotify (it refreshes the
// other).
func autoEdgeRefresh(e kinds.AutoEdge) string {
	switch {
	case !e.Notify:
		return ""
	case e.Before():
		return "; refreshes it when changed (autonotify)"
	default:
		return "; refreshed when it changes (autosubscribe)"
	}
}
