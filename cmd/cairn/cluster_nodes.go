package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newClusterNodesCmd is `cairn cluster nodes CLUSTER`: the nodes of a
// cluster with what their agents reported of their hosts.
func newClusterNodesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nodes CLUSTER",
		Short: "List a cluster's nodes with the facts their agents reported (hostname, OS, CPUs, memory)",
		Long: "Nodes lists the nodes of a cluster: id, mode, roles and, for agent nodes that\n" +
			"reported them, the facts of their hosts. -o json or -o yaml prints every node whole,\n" +
			"attributes and facts (addresses, boot id, kernel) included.",
		Example: "  cairn cluster nodes env-1\n  cairn cluster nodes env-1 -o json",
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		cl, err := c.GetCluster(cmd.Context(), args[0])
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.print(cl.Nodes, func(w io.Writer) error {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tMODE\tROLES\tHOSTNAME\tOS\tCPUS\tMEMORY\tREPORTED")
			for _, n := range cl.Nodes {
				mode := string(n.Mode)
				if mode == "" {
					mode = "local"
				}
				host, osName, cpus, mem, at := "-", "-", "-", "-", "-"
				if f := n.Facts; f != nil {
					host, osName = f.Hostname, strings.TrimSpace(f.OS.ID+" "+f.OS.VersionID)
					cpus, mem = fmt.Sprint(f.CPUs), fmt.Sprintf("%.1f GiB", float64(f.MemoryBytes)/(1<<30))
					at = f.ReportedAt.UTC().Format("2006-01-02 15:04:05Z")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.ID, mode, strings.Join(n.Roles, ","), host, osName, cpus, mem, at)
			}
			return tw.Flush()
		})
	}
	return cmd
}
