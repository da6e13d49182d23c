package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

// ownerFlags name the release, cluster or plugin a graph belongs to.
type ownerFlags struct {
	release, cluster, plugin string
}

func (f *ownerFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.release, "release", "", "the graph of this release `ID`")
	fs.StringVar(&f.cluster, "cluster", "", "the graph of this cluster `ID`")
	fs.StringVar(&f.plugin, "plugin", "", "the graph of this plugin `ID`")
}

// owner returns the one layer and id given.
func (f *ownerFlags) owner() (model.Layer, string, error) {
	var layer model.Layer
	var id string
	n := 0
	for _, o := range []struct {
		layer model.Layer
		id    string
	}{{model.LayerRelease, f.release}, {model.LayerCluster, f.cluster}, {model.LayerPlugin, f.plugin}} {
		if o.id != "" {
			layer, id = o.layer, o.id
			n++
		}
	}
	if n != 1 {
		return "", "", fmt.Errorf("give one of --release, --cluster or --plugin")
	}
	return layer, id, nil
}

func newGraphUploadCmd(a *app) *cobra.Command {
	var (
		df        documentFlags
		of        ownerFlags
		graphType string
		file, dir string
		yes       bool
	)
	cmd := &cobra.Command{
		Use:   "upload (--release|--cluster|--plugin ID) [--type TYPE] [--yes] (--file FILE | --dir DIR)",
		Short: "Upload a graph of a type to a release, cluster or plugin, replacing the one stored",
		Long: "Upload sends a graph (a Graph document, a Fuel graph object or a bare list of tasks)\n" +
			"to be stored as the owner's graph of that type, replacing the previous one whole.\n" +
			"--dir sends every *.yaml, *.yml, *.json and *.jsonnet file of a directory as one\n" +
			"graph. Jsonnet is evaluated here, with imports relative to the importing file.\n" +
			"Without --type the graph is stored as the type the documents declare (metadata.type,\n" +
			"or type of a Fuel graph object); a bare task list is stored as \"default\" once you\n" +
			"confirm it, or with --yes.",
		Example: "  cairn graph upload --cluster c1 --type upgrade --file upgrade.yaml\n  cairn graph upload --release r1 --dir tasks/ --yes",
		Args:    cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		layer, owner, err := of.owner()
		if err != nil {
			return err
		}
		if (file == "") == (dir == "") {
			return fmt.Errorf("give --file or --dir")
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		pl, err := loadPayload(ctx, a, &df, []string{file + dir})
		if err != nil {
			return err
		}
		typ := graphType
		if typ == "" {
			// A malformed document declares nothing; the server then
			// reports it with its positions.
			declared, _ := graphs.DeclaredTypes(pl.doc.Data)
			if typ, err = chooseType(a, declared, yes, "upload"); err != nil {
				return err
			}
		}
		info, err := c.PutGraph(ctx, layer, owner, typ, pl.doc)
		if err != nil {
			return apiFailure(a, err, pl.detailNames)
		}
		return r.print(info, func(w io.Writer) error { return graphTable(w, []model.GraphInfo{*info}) })
	}
	f := cmd.Flags()
	df.register(f)
	of.register(f)
	f.StringVar(&graphType, "type", "", "graph type (default: the type the documents declare, else \"default\" once confirmed)")
	f.BoolVarP(&yes, "yes", "y", false, "store a graph that declares no type as \"default\" without asking")
	f.StringVar(&file, "file", "", "the graph `FILE` (YAML, JSON or Jsonnet)")
	f.StringVar(&dir, "dir", "", "a `DIR`ectory of graph files, sent as one graph")
	return cmd
}

func newGraphDownloadCmd(a *app) *cobra.Command {
	var (
		of        ownerFlags
		graphType string
		file      string
		merged    bool
		layers    []string
	)
	cmd := &cobra.Command{
		Use:   "download (--release|--cluster|--plugin ID) [--type TYPE] [--merged | --layers L,…] [--file FILE]",
		Short: "Download a stored graph, or a cluster's merged graph of a type",
		Long: "Download prints (or writes to --file) the owner's graph of a type: YAML by default,\n" +
			"the source as uploaded when it was YAML; -o json re-encodes it; -o table lists its\n" +
			"tasks. With --cluster and --merged it is the merge of the release's, the cluster's\n" +
			"and the plugins' graphs of the type, as an execution would run it; --layers merges\n" +
			"some of them only (release,cluster or plugins), as fuel2's partial downloads.\n" +
			"Without --type: the \"default\" graph when there is one, else the only type there is.",
		Example: "  cairn graph download --cluster c1 --type upgrade --merged --file merged.yaml\n" +
			"  cairn graph download --cluster c1 --layers release,cluster\n" +
			"  cairn graph download --cluster c1 --layers plugins",
		Args: cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatYAML)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		layer, owner, err := of.owner()
		if err != nil {
			return err
		}
		only, err := parseLayers(layers)
		if err != nil {
			return err
		}
		if merged && layer != model.LayerCluster {
			return fmt.Errorf("--merged needs --cluster")
		}
		if only != nil && layer != model.LayerCluster {
			return fmt.Errorf("--layers needs --cluster")
		}
		if merged && only != nil {
			return fmt.Errorf("give --merged (every layer) or --layers, not both")
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		typ := graphType
		if typ == "" {
			if typ, err = downloadType(ctx, a, c, layer, owner, merged || only != nil); err != nil {
				return err
			}
		}
		format := r.out.format
		if format == formatTable {
			format = formatJSON
		}
		var data []byte
		if merged || only != nil {
			data, err = c.MergedLayers(ctx, owner, typ, format, only)
		} else {
			data, _, err = c.GetGraph(ctx, layer, owner, typ, format)
		}
		if err != nil {
			return apiFailure(a, err, nil)
		}
		if r.table() {
			if file != "" {
				return fmt.Errorf("--file writes the graph itself: use -o yaml or -o json")
			}
			return taskTable(r.a.stdout, data)
		}
		if file != "" {
			return os.WriteFile(file, data, 0o644)
		}
		_, err = r.a.stdout.Write(data)
		return err
	}
	f := cmd.Flags()
	of.register(f)
	f.StringVar(&graphType, "type", "", "graph type (default: \"default\" when stored, else the only type there is)")
	f.StringVar(&file, "file", "", "write the graph to `FILE` instead of stdout")
	f.BoolVar(&merged, "merged", false, "with --cluster: the merge of the release, cluster and plugin graphs")
	f.StringSliceVar(&layers, "layers", nil, "with --cluster: merge these layers only (release, cluster, plugins)")
	return cmd
}

// parseLayers reads --layers; nil when not given.
func parseLayers(names []string) ([]model.Layer, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var out []model.Layer
	for _, n := range names {
		switch strings.TrimSpace(n) {
		case "release":
			out = append(out, model.LayerRelease)
		case "cluster":
			out = append(out, model.LayerCluster)
		case "plugin", "plugins":
			out = append(out, model.LayerPlugin)
		default:
			return nil, fmt.Errorf("--layers: %q is not release, cluster or plugins", n)
		}
	}
	return out, nil
}

// downloadType picks the type to download when none is given: "default"
// when the owner (or, merged, any layer of the cluster) has it, else the
// only type there is, said on stderr; never nothing in silence.
func downloadType(ctx context.Context, a *app, c *client.Client, layer model.Layer, owner string, merged bool) (string, error) {
	list, err := listGraphs(ctx, c, layer, owner, merged)
	if err != nil {
		return "", apiFailure(a, err, nil)
	}
	var types []string
	for _, g := range list {
		if !slices.Contains(types, g.Type) {
			types = append(types, g.Type)
		}
	}
	switch {
	case slices.Contains(types, model.DefaultGraphType):
		return model.DefaultGraphType, nil
	case len(types) == 1:
		fmt.Fprintf(a.stderr, "graph type %q (the only one stored)\n", types[0])
		return types[0], nil
	case len(types) == 0:
		return "", fmt.Errorf("%s %s has no graph", layer, owner)
	}
	return "", fmt.Errorf("%s %s has graph types %s and no %q one: give --type", layer, owner, strings.Join(types, ", "), model.DefaultGraphType)
}

// taskTable lists the tasks of a graph in JSON (the Graph document).
func taskTable(w io.Writer, data []byte) error {
	var g struct {
		Metadata struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"metadata"`
		Tasks []struct {
			ID       string   `json:"id"`
			Type     string   `json:"type"`
			Roles    any      `json:"roles"`
			Requires []string `json:"requires"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return fmt.Errorf("read graph: %w", err)
	}
	t := newTable(w, "TASK", "TYPE", "ROLES", "REQUIRES")
	for _, task := range g.Tasks {
		t.row(task.ID, orDash(task.Type), orDash(rolesText(task.Roles)), orDash(strings.Join(task.Requires, ", ")))
	}
	return t.flush()
}

// rolesText renders Fuel roles: a list, or one string such as '*'.
func rolesText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

func newGraphListCmd(a *app) *cobra.Command {
	var (
		of        ownerFlags
		all       bool
		graphType string
	)
	cmd := &cobra.Command{
		Use:   "list [--release|--cluster|--plugin ID [--all]] [--type TYPE]",
		Short: "List stored graphs with their relations",
		Long: "List shows every stored graph (GET /v1/graphs): its layer and owner, type, name and\n" +
			"the clusters whose executions merge it (USED BY). With an owner it lists that\n" +
			"owner's graphs with their task counts; with --cluster and --all also the graphs\n" +
			"of the cluster's release and plugins, the layers an execution merges.",
		Aliases: []string{"ls"},
		Args:    cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		c, err := r.client()
		if err != nil {
			return err
		}
		if of.release == "" && of.cluster == "" && of.plugin == "" {
			if all {
				return fmt.Errorf("--all needs --cluster")
			}
			list, err := c.ListAllGraphs(ctx, model.GraphFilter{Type: graphType})
			if err != nil {
				return apiFailure(a, err, nil)
			}
			return r.print(map[string]any{"graphs": list}, func(w io.Writer) error { return graphMetaTable(w, list) })
		}
		layer, owner, err := of.owner()
		if err != nil {
			return err
		}
		if all && layer != model.LayerCluster {
			return fmt.Errorf("--all needs --cluster")
		}
		list, err := listGraphs(ctx, c, layer, owner, all)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		if graphType != "" {
			list = slices.DeleteFunc(list, func(g model.GraphInfo) bool { return g.Type != graphType })
		}
		return r.print(map[string]any{"graphs": list}, func(w io.Writer) error { return graphTable(w, list) })
	}
	f := cmd.Flags()
	of.register(f)
	f.BoolVar(&all, "all", false, "with --cluster: also the graphs of its release and plugins")
	f.StringVar(&graphType, "type", "", "only graphs of this type")
	return cmd
}

// listGraphs lists an owner's graphs; with all, a cluster's release's,
// its own and its plugins' in merge order.
func listGraphs(ctx context.Context, c *client.Client, layer model.Layer, owner string, all bool) ([]model.GraphInfo, error) {
	if !all {
		list, err := c.ListGraphs(ctx, layer, owner)
		if list == nil {
			list = []model.GraphInfo{}
		}
		return list, err
	}
	cl, err := c.GetCluster(ctx, owner)
	if err != nil {
		return nil, err
	}
	out := []model.GraphInfo{}
	for _, o := range cl.GraphOwners() {
		list, err := c.ListGraphs(ctx, o.Layer, o.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return out, nil
}

func graphTable(w io.Writer, list []model.GraphInfo) error {
	t := newTable(w, "LAYER", "OWNER", "TYPE", "NAME", "TASKS", "USED BY", "UPDATED")
	for _, g := range list {
		t.row(string(g.Layer), g.OwnerID, g.Type, orDash(g.Name), fmt.Sprint(g.Tasks), orDash(strings.Join(g.UsedBy, ",")), formatTime(g.UpdatedAt))
	}
	return t.flush()
}

func graphMetaTable(w io.Writer, list []model.GraphMeta) error {
	t := newTable(w, "LAYER", "OWNER", "TYPE", "NAME", "USED BY", "UPDATED")
	for _, g := range list {
		t.row(string(g.Layer), g.OwnerID, g.Type, orDash(g.Name), orDash(strings.Join(g.UsedBy, ",")), formatTime(g.UpdatedAt))
	}
	return t.flush()
}

func newGraphDeleteCmd(a *app) *cobra.Command {
	var (
		of        ownerFlags
		graphType string
	)
	cmd := &cobra.Command{
		Use:   "delete (--release|--cluster|--plugin ID) [--type TYPE]",
		Short: "Delete an owner's graph of a type",
		Args:  cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		layer, owner, err := of.owner()
		if err != nil {
			return err
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		if err := c.DeleteGraph(cmd.Context(), layer, owner, graphType); err != nil {
			return apiFailure(a, err, nil)
		}
		res := map[string]any{"deleted": true, "layer": layer, "ownerId": owner, "type": graphType}
		return r.print(res, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "deleted graph %q of %s %s\n", graphType, layer, owner)
			return err
		})
	}
	f := cmd.Flags()
	of.register(f)
	f.StringVar(&graphType, "type", model.DefaultGraphType, "graph type")
	return cmd
}

func newGraphExecuteCmd(a *app) *cobra.Command {
	var (
		cluster string
		types   []string
		nodes   []string
		req     contract.GraphRequest
		run     runFlags
		bitmask bool
	)
	cmd := &cobra.Command{
		Use:   "execute --cluster ID [--type TYPE]... [--nodes N1,N2] [--tasks T1,T2] [--event E]... [--dry-run] [--noop] [--force]",
		Short: "Execute a cluster's merged graph of a type on all or some of its nodes",
		Long: "Execute merges the release's, the cluster's and the plugins' graphs of each type and\n" +
			"runs them on the cluster's nodes (--nodes: a subset; --tasks: only these tasks, the\n" +
			"others skipped with their edges kept). --dry-run plans without changing anything,\n" +
			"--noop runs tasks in no-op mode, --force reruns tasks that would be skipped as done.\n" +
			"--event names what the execution is (fuel2's deploy_changes, or a configuration\n" +
			"resource such as nova_config): a task that already ran on a node is then left as it\n" +
			"ran unless its reexecute_on or refresh_on names one of the events.\n" +
			"It follows the execution with a progress bar (--wait=false: print its id and return).\n" +
			"Exit codes: 0 success, 1 failure; with --detailed-exitcodes Puppet's bitmask: 0 nothing\n" +
			"changed and nothing failed, 2 changes, 4 failed tasks, 6 changes and failed tasks.",
		Example: "  cairn graph execute --cluster c1 --type upgrade --nodes node-1,node-2\n" +
			"  cairn graph execute --cluster c1 --tasks migrate-db --dry-run",
		Args: cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if cluster == "" {
			return fmt.Errorf("give --cluster")
		}
		if err := run.check(); err != nil {
			return err
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		switch len(types) {
		case 0:
		case 1:
			req.Type = types[0]
		default:
			req.Types = types
		}
		req.OnFailure, req.Parallelism = model.OnFailure(run.onFailure), run.parallelism
		req.Nodes = append(req.Nodes, nodes...)
		ex, err := c.ExecuteGraph(ctx, cluster, req)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return r.started(ctx, c, ex, run.wait, newExitMode(false, bitmask))
	}
	f := cmd.Flags()
	f.StringVar(&cluster, "cluster", "", "the cluster `ID` (required)")
	f.StringArrayVar(&types, "type", nil, "graph type to execute (default \"default\"); repeatable, run in order")
	f.StringSliceVar(&req.Nodes, "nodes", nil, "run on these nodes only (ids or names, comma separated)")
	f.StringSliceVar(&nodes, "node", nil, "same as --nodes (fuel2's spelling)")
	f.StringSliceVar(&req.Events, "event", nil, "name an event of this execution (deploy_changes, …); repeatable")
	f.StringSliceVar(&req.Tasks, "tasks", nil, "run these tasks only (comma separated); the others are skipped")
	f.BoolVar(&req.DryRun, "dry-run", false, "plan the execution without changing anything")
	f.BoolVar(&req.Noop, "noop", false, "run the tasks in no-op mode")
	f.BoolVar(&req.Force, "force", false, "run every task, also those that would be skipped as already done")
	f.BoolVar(&bitmask, "detailed-exitcodes", false, "Puppet's exit codes: 0 no changes, 2 changes, 4 failures, 6 changes and failures")
	run.register(f, model.OnFailureStop)
	r.out.registerColor(f)
	return cmd
}
