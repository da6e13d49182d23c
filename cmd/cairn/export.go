package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/model"
)

func newExportCmd(a *app) *cobra.Command {
	var (
		stackRef string
		req      model.ExportRequest
		sel      model.ExportSelector
		file     string
		where    platformFlags
	)
	cmd := &cobra.Command{
		Use:   "export (--stack STACK | --label LABEL... | --resource KIND/NAME... | --all | --kind KIND... [--dir DIR | --url URL --path PATH | --program PROG | --spec-file F] [--name NAME]... [--id [KIND:]ID]... [--recursive])",
		Short: "Export existing resources as a package (YAML or JSON)",
		Long: "Export asks the server for a package of existing resources: those a stack records, as\n" +
			"they are now, or the objects of some kinds found on the control plane (files and\n" +
			"directories under --dir) or on a platform no stack manages: an http API's collection\n" +
			"(--url, --path, --header) or an external program's instances (--program, --config),\n" +
			"or any spec saying where to list (--spec-file, with envRef/secretRef values resolved\n" +
			"from --env and --secret for the listing only). --id picks objects by the platform's\n" +
			"own id (--id http:42 also selects the kind); exported resources carry those ids, so a\n" +
			"stack applying them adopts the objects. As pkger, stacks' resources can be picked by label (those\n" +
			"associated with the label, and the label), by resource id (KIND/NAME) or all of every\n" +
			"stack; --stack narrows --label and --resource to one stack. Selected resources bring\n" +
			"their labels; a dependsOn on a resource left out is dropped. The package prints as\n" +
			"YAML (default) or JSON; -o table lists its resources instead.",
		Example: "  cairn export --stack web > web.yaml\n  cairn export --kind file --dir /etc/app -o json\n" +
			"  cairn export --label production --resource Bucket/logs\n  cairn export --all > everything.yaml\n" +
			"  cairn export --id http:42 --url https://api.example --path /api/v2/dashboards \\\n" +
			"      --header 'Authorization=Bearer {{ secret \"TOKEN\" }}' --secrets-file api.secrets",
		Args: cobra.NoArgs,
	}
	r := newRemote(a, cmd, formatYAML)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		c, err := r.client()
		if err != nil {
			return err
		}
		if err := where.apply(&req, &sel); err != nil {
			return err
		}
		if len(req.Kinds) > 0 && stackRef == "" && !req.All && len(req.Resources) == 0 {
			// With kinds, labels filter the listing: the platform's labels.
			sel.Labels, req.Labels = req.Labels, nil
		}
		fromStacks := stackRef != "" || req.All || len(req.Labels) > 0 || len(req.Resources) > 0
		if fromStacks == (len(req.Kinds) > 0) {
			return fmt.Errorf("give --stack, --label, --resource or --all, or --kind with a selector")
		}
		if stackRef != "" {
			st, err := resolveStack(ctx, c, stackRef)
			if err != nil {
				return apiFailure(a, err, nil)
			}
			req.StackID = st.ID
		} else if sel.Dir != "" || len(sel.Names) > 0 || sel.Recursive || len(sel.Spec) > 0 || len(sel.IDs) > 0 || len(sel.Labels) > 0 {
			req.Selector = &sel
		}
		format := r.out.format
		if format == formatTable {
			format = formatJSON
		}
		data, err := c.Export(ctx, req, format)
		if err != nil {
			return apiFailure(a, err, nil)
		}
		out := r.a.stdout
		if file != "" {
			if r.table() {
				return fmt.Errorf("--file writes the package itself: use -o yaml or -o json")
			}
			return os.WriteFile(file, data, 0o644)
		}
		if r.table() {
			return exportTable(out, data)
		}
		_, err = out.Write(data)
		return err
	}
	f := cmd.Flags()
	f.StringVar(&stackRef, "stack", "", "export the resources of this stack (id or name)")
	f.StringArrayVar(&req.Labels, "label", nil, "export the resources associated with this `LABEL` (its name or metadata.name); with --kind, the objects linked to this label of the platform (its id); repeatable")
	f.StringArrayVar(&req.Resources, "resource", nil, "export this resource, `KIND/NAME`; repeatable")
	f.BoolVar(&req.All, "all", false, "export every stack's resources")
	f.StringArrayVar(&req.Kinds, "kind", nil, "export the objects of this `KIND`; repeatable")
	f.StringVar(&sel.Dir, "dir", "", "with --kind: the directory to look in")
	f.StringArrayVar(&sel.Names, "name", nil, "with --kind: only objects of this name; repeatable")
	f.BoolVar(&sel.Recursive, "recursive", false, "with --kind: look in subdirectories too")
	f.StringVar(&file, "file", "", "write the package to `FILE` instead of stdout")
	where.register(f)
	return cmd
}

// exportTable lists the resources of an exported package (the API
// exports JSON as an array of documents).
func exportTable(w io.Writer, data []byte) error {
	var docs []struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(data, &docs); err != nil {
		return fmt.Errorf("read exported package: %w", err)
	}
	t := newTable(w, "KIND", "NAME", "PATH")
	for _, d := range docs {
		p, _ := d.Spec["path"].(string)
		t.row(d.Kind, d.Metadata.Name, orDash(p))
	}
	return t.flush()
}
