package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

func newGraphCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Work with typed task graphs (Fuel style)",
	}
	cmd.AddCommand(graphSubcommands(a)...)
	return cmd
}

// graphSubcommands lists the subcommands of `cairn graph`.
func graphSubcommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		newGraphMergeCmd(a),
		newGraphShowCmd(a),
		newGraphUploadCmd(a),
		newGraphDownloadCmd(a),
		newGraphListCmd(a),
		newGraphDeleteCmd(a),
		newGraphExecuteCmd(a),
	}
}

func newGraphMergeCmd(a *app) *cobra.Command {
	var (
		df                documentFlags
		release, cluster  string
		plugins           []string
		graphType, outFmt string
		yes               bool
	)
	cmd := &cobra.Command{
		Use:   "merge --release FILE [--cluster FILE] [--plugin FILE]... [--type TYPE] [--yes]",
		Short: "Merge the release, cluster and plugin layers of a graph type and print the result",
		Long: "Merge reads graph layers and merges the tasks of one type by id, release, then\n" +
			"cluster, then plugins in the order given, each later layer overriding field by\n" +
			"field (null removes a field; type: skipped disables a task and keeps its edges).\n" +
			"The merged graph is validated and printed as a Cairn graph document. Without --type\n" +
			"it merges the type the files declare; files that declare none (bare task lists)\n" +
			"merge as \"default\" once you confirm it, or with --yes.",
		Example: "  cairn graph merge --release tasks.yaml --cluster cluster.yaml --plugin lma.yaml --type upgrade",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if release == "" && cluster == "" && len(plugins) == 0 {
				return errors.New("give at least one layer: --release, --cluster or --plugin")
			}
			if outFmt != "yaml" && outFmt != "json" {
				return fmt.Errorf("-o %q: want yaml or json", outFmt)
			}
			var files []layerFile
			if release != "" {
				files = append(files, layerFile{layer: model.LayerRelease, file: release})
			}
			if cluster != "" {
				files = append(files, layerFile{layer: model.LayerCluster, file: cluster})
			}
			for _, p := range plugins {
				files = append(files, layerFile{layer: model.LayerPlugin, file: p})
			}
			var declared []string
			for i := range files {
				if err := files[i].read(a, &df); err != nil {
					return err
				}
				for _, t := range files[i].declared {
					if !slices.Contains(declared, t) {
						declared = append(declared, t)
					}
				}
			}
			typ := graphType
			if typ == "" {
				var err error
				if typ, err = chooseType(a, declared, yes, "merge"); err != nil {
					return err
				}
			}
			var layers []graphs.LayerGraph
			var types []string
			found := false
			for _, f := range files {
				g := f.of(typ)
				found = found || g != nil
				layers = append(layers, graphs.LayerGraph{Layer: f.layer, Owner: f.file, Graph: g})
				for _, other := range f.graphs {
					if !slices.Contains(types, other.Type) {
						types = append(types, other.Type)
					}
				}
			}
			if !found {
				// Printing an empty graph would look like a result.
				return fmt.Errorf("no layer has a graph of type %q (the files hold %s)", typ, strings.Join(types, ", "))
			}
			merged, err := graphs.Merge(typ, layers...)
			if err != nil {
				return err
			}
			if errs := graphs.ValidateGraph(nil, merged); len(errs) > 0 {
				fmt.Fprintf(a.stderr, "the merged %s graph is not valid:\n", typ)
				return reportDocumentErrors(a.stderr, errs)
			}
			out, err := graphs.MarshalGraph(merged, outFmt)
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(out)
			return err
		},
	}
	f := cmd.Flags()
	df.register(f)
	f.StringVar(&release, "release", "", "release layer `FILE`")
	f.StringVar(&cluster, "cluster", "", "cluster layer `FILE`")
	f.StringArrayVar(&plugins, "plugin", nil, "plugin layer `FILE`; repeatable, merged in the order given")
	f.StringVar(&graphType, "type", "", "graph type to merge (default: the type the files declare)")
	f.BoolVarP(&yes, "yes", "y", false, "merge files that declare no type as \"default\" without asking")
	f.StringVarP(&outFmt, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

// layerFile is one layer of an offline merge: its graphs by type and the
// types its documents declare.
type layerFile struct {
	layer    model.Layer
	file     string
	graphs   []*model.Graph
	declared []string
}

// read parses the file as a layer (it may leave out task types and refer
// to tasks of other layers) and finds the types it declares: those of its
// YAML and JSON documents, and every graph Jsonnet evaluates to.
func (l *layerFile) read(a *app, df *documentFlags) error {
	partial := *df
	partial.partial = true
	parsed, err := partial.parse(a, []string{l.file})
	if err != nil {
		return err
	}
	if len(parsed.docs.Graphs) == 0 {
		return fmt.Errorf("%s: no graph in this file", l.file)
	}
	l.graphs = parsed.docs.Graphs
	srcs, err := graphs.ReadFiles(l.file)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		if src.Format == graphs.FormatJsonnet {
			for _, g := range l.graphs {
				l.declared = append(l.declared, g.Type)
			}
			continue
		}
		types, err := graphs.DeclaredTypes(src.Data)
		if err != nil {
			return fmt.Errorf("%s: %w", src.Name, err)
		}
		l.declared = append(l.declared, types...)
	}
	return nil
}

// of is the layer's graph of a type, or nil when it has none.
func (l *layerFile) of(typ string) *model.Graph {
	for _, g := range l.graphs {
		if g.Type == typ {
			return g
		}
	}
	return nil
}

func newGraphShowCmd(a *app) *cobra.Command {
	var (
		df                   documentFlags
		nodesFile, graphType string
		onlyNodes, tasks     []string
		outFmt               string
	)
	cmd := &cobra.Command{
		Use:   "show FILE... --nodes NODES.yaml [--only-nodes a,b] [--tasks x,y]",
		Short: "Expand a graph onto nodes and print its steps by topological layer",
		Long: "Show expands a graph's tasks onto the nodes of NODES.yaml (a list of {id, name,\n" +
			"roles}, or {nodes: [...]}) and prints the steps layer by layer, each with its\n" +
			"dependencies. --only-nodes runs on a subset of nodes; --tasks runs a subset of\n" +
			"tasks (the others are skipped but keep their edges).",
		Example: "  cairn graph show tasks.yaml --nodes nodes.yaml --type upgrade --only-nodes node-1",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outFmt != "text" && outFmt != "json" {
				return fmt.Errorf("-o %q: want text or json", outFmt)
			}
			nodes, err := readNodes(nodesFile)
			if err != nil {
				return err
			}
			parsed, err := df.parse(a, args)
			if err != nil {
				return err
			}
			g, err := pickGraph(parsed.docs.Graphs, graphType, cmd.Flags().Changed("type"))
			if err != nil {
				return err
			}
			crossDeps, err := nodesCrossDeps(nodes)
			if err != nil {
				return err
			}
			steps, err := graphs.Expand(g, nodes, graphs.ExpandOptions{
				Nodes: onlyNodes, Tasks: tasks, Catalogue: parsed.docs.Catalogue, CrossDeps: crossDeps,
			})
			if err != nil {
				return err
			}
			layers, err := graphs.Sort(steps)
			if err != nil {
				return err
			}
			if outFmt == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"type": g.Type, "layers": layers})
			}
			printLayers(a.stdout, g, nodes, steps, layers)
			return nil
		},
	}
	f := cmd.Flags()
	df.register(f)
	f.StringVar(&nodesFile, "nodes", "", "`FILE` listing the cluster's nodes (YAML or JSON)")
	f.StringVar(&graphType, "type", model.DefaultGraphType, "graph type to show (default: the only graph, else \"default\")")
	f.StringSliceVar(&onlyNodes, "only-nodes", nil, "run on these nodes only (ids or names; master is the control plane)")
	f.StringSliceVar(&tasks, "tasks", nil, "run these tasks only; the others become skipped")
	f.StringVarP(&outFmt, "output", "o", "text", "output format: text or json")
	_ = cmd.MarkFlagRequired("nodes")
	return cmd
}

// pickGraph selects the graph of a type; without an explicit type the only
// graph there is will do.
func pickGraph(gs []*model.Graph, graphType string, explicit bool) (*model.Graph, error) {
	if !explicit && len(gs) == 1 {
		return gs[0], nil
	}
	types := make([]string, 0, len(gs))
	for _, g := range gs {
		if g.Type == graphType {
			return g, nil
		}
		types = append(types, g.Type)
	}
	if len(types) == 0 {
		return nil, errors.New("no graph in the documents")
	}
	return nil, fmt.Errorf("no graph of type %q (found %s)", graphType, strings.Join(types, ", "))
}

// readNodes reads a node list: [{id, name, roles}] or {nodes: [...]}.
func readNodes(file string) ([]model.Node, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: no nodes", file)
	}
	list := root.Content[0]
	if list.Kind == yaml.MappingNode {
		var wrapped *yaml.Node
		for i := 0; i+1 < len(list.Content); i += 2 {
			if list.Content[i].Value == "nodes" {
				wrapped = list.Content[i+1]
			}
		}
		if wrapped == nil {
			return nil, fmt.Errorf("%s:%d:%d: expected a list of nodes or {nodes: [...]}", file, list.Line, list.Column)
		}
		list = wrapped
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d:%d: expected a list of nodes", file, list.Line, list.Column)
	}
	var nodes []model.Node
	seen := map[string]int{}
	var errs []error
	for i, item := range list.Content {
		at := fmt.Sprintf("%s:%d:%d: node %d", file, item.Line, item.Column, i)
		if item.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("%s: expected {id, name, roles}", at))
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			switch k := item.Content[j]; k.Value {
			case "id", "name", "roles", "mode":
			default:
				errs = append(errs, fmt.Errorf("%s:%d:%d: node %d: unknown field %q (want id, name, roles, mode)", file, k.Line, k.Column, i, k.Value))
			}
		}
		var n model.Node
		if err := item.Decode(&n); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		if n.ID == "" && n.Name == "" {
			errs = append(errs, fmt.Errorf("%s has neither id nor name", at))
			continue
		}
		for _, key := range []string{n.ID, n.Name} {
			if key == "" {
				continue
			}
			if key == model.ControlPlane {
				errs = append(errs, fmt.Errorf("%s:%d:%d: node %q: %q names the control plane", file, item.Line, item.Column, key, key))
			}
			if j, dup := seen[key]; dup && j != i {
				errs = append(errs, fmt.Errorf("%s:%d:%d: node %q is listed twice", file, item.Line, item.Column, key))
			}
			seen[key] = i
		}
		nodes = append(nodes, n)
	}
	return nodes, errors.Join(errs...)
}

// printLayers prints one line per step, layer by layer, with its deps.
func printLayers(w io.Writer, g *model.Graph, nodes []model.Node, steps []*model.Step, layers [][]*model.Step) {
	title := g.Type
	if g.Name != "" {
		title = fmt.Sprintf("%s (%s)", g.Type, g.Name)
	}
	fmt.Fprintf(w, "graph %s: %s in %s on %s\n", title, plural(len(steps), "step", "steps"),
		plural(len(layers), "layer", "layers"), plural(len(nodes), "node", "nodes"))
	for i, layer := range layers {
		fmt.Fprintf(w, "layer %d:\n", i+1)
		for _, s := range layer {
			var b strings.Builder
			fmt.Fprintf(&b, "  %s [%s", s.ID, s.Kind)
			if s.Strategy > 0 {
				fmt.Fprintf(&b, ", max %d at once", s.Strategy)
			}
			b.WriteString("]")
			deps := append([]string(nil), s.Deps...)
			for _, group := range s.AnyOf {
				deps = append(deps, "any("+strings.Join(group, "|")+")")
			}
			if len(deps) > 0 {
				b.WriteString(" <- ")
				b.WriteString(strings.Join(deps, ", "))
			}
			fmt.Fprintln(w, b.String())
		}
	}
}
