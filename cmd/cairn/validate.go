package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/server"
)

func newValidateCmd(a *app) *cobra.Command {
	var (
		df documentFlags
		pf paramFlags
	)
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR...",
		Short: "Validate packages and graphs offline, reporting every error at once",
		Long: "Validate reads YAML, JSON and Jsonnet documents (a directory contributes its\n" +
			"*.yaml, *.yml, *.json and *.jsonnet files) as one package plus its graphs, and\n" +
			"reports every problem as FILE:LINE:COL: PATH: message. Jsonnet imports resolve\n" +
			"relative to the importing file's directory and may not leave it.\n\n" +
			"It then warns of the variables and environment references the package reads that\n" +
			"have no value, as a plan does: give them with --var/--var-file and --env/--env-file\n" +
			"as you would to apply (an env ref may also come from the server's environment).",
		Example: "  cairn validate examples/motd.yaml\n  cairn validate --ext-var site=lab deploy.jsonnet\n" +
			"  cairn validate --var-file prod.yaml --env SITE=prod site.yaml",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params, err := pf.params()
			if err != nil {
				return err
			}
			docs, err := df.parse(a, args)
			if err != nil {
				return err
			}
			if docs.docs.Deployster {
				if params.Vars, err = withDeploysterAutoVars(params.Vars); err != nil {
					return err
				}
			}
			fmt.Fprintln(a.stdout, summary(docs))
			env, _ := docs.docs.RequiredRefs()
			env = slices.DeleteFunc(env, func(k string) bool { _, ok := params.EnvRefs[k]; return ok })
			printMissing(a.stdout, palette{}, env, " here (the server's environment may have them)", docs.docs.MissingVars(params.Vars))
			return nil
		},
	}
	df.register(cmd.Flags())
	pf.registerEnvAndVars(cmd.Flags())
	cmd.Flags().BoolVar(&df.partial, "partial", false, "read graph layers: tasks may omit their type, references are checked after merging")
	return cmd
}

// summary is validate's one-line report.
func summary(d *parsedDocuments) string {
	var tasks int
	for _, g := range d.docs.Graphs {
		tasks += len(g.Tasks)
	}
	parts := []string{plural(len(d.docs.Package.Resources), "resource", "resources")}
	if len(d.docs.Graphs) > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", plural(len(d.docs.Graphs), "graph", "graphs"), plural(tasks, "task", "tasks")))
	}
	if len(d.docs.Kinds) > 0 {
		parts = append(parts, plural(len(d.docs.Kinds), "kind", "kinds"))
	}
	return fmt.Sprintf("%s: %s: valid", plural(d.files, "file", "files"), strings.Join(parts, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// documentFlags are the flags of commands that read documents.
type documentFlags struct {
	extVars  []string
	partial  bool
	kindsDir string
	// files are the -f paths of commands that take them (registerFiles).
	files []string
}

func (f *documentFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.extVars, "ext-var", nil, "Jsonnet external variable `key=value` (std.extVar); repeatable")
	fs.StringVar(&f.kindsDir, "kinds-dir", os.Getenv("CAIRN_KINDS_DIR"), "directory of kind definitions the documents may use, as the server reads it (default $CAIRN_KINDS_DIR)")
}

// registerFiles adds -f/--filename, kubectl's spelling of the FILE|DIR
// arguments: the package's files and directories, after the arguments.
func (f *documentFlags) registerFiles(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&f.files, "filename", "f", nil, "a file or directory of the package (repeatable; the same as an argument)")
}

// paths are the command's arguments and its -f paths.
func (f *documentFlags) paths(args []string) []string {
	return append(slices.Clone(args), f.files...)
}

func (f *documentFlags) extVarMap() (map[string]string, error) {
	if len(f.extVars) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(f.extVars))
	for _, kv := range f.extVars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--ext-var %q: want key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

type parsedDocuments struct {
	docs  *graphs.Documents
	files int
}

// read reads the documents of files and directories paths (at least one)
// with the --ext-var values they are evaluated with.
func (f *documentFlags) read(paths []string) (map[string]string, []graphs.Source, error) {
	ext, err := f.extVarMap()
	if err != nil {
		return nil, nil, err
	}
	// The author's own files: larger than one request may be (they reach
	// the server in parts), each document still held to its limits.
	srcs, err := graphs.ReadFilesLimit(graphs.DefaultMaxFileBytes, paths...)
	if err != nil {
		return nil, nil, err
	}
	if len(srcs) == 0 {
		return nil, nil, fmt.Errorf("no documents in %s", strings.Join(paths, ", "))
	}
	return ext, srcs, nil
}

// parse reads and validates documents. Problems in the documents are
// printed to stderr, one per line, and end the command with exit code 1.
func (f *documentFlags) parse(a *app, paths []string) (*parsedDocuments, error) {
	ext, srcs, err := f.read(paths)
	if err != nil {
		return nil, err
	}
	// Documents validate as the server would read them: with the kinds
	// defined in the kinds directory. Provisioning hooks (CAIRN_HOOK_*) are
	// the server's settings: one not configured here is a warning, since
	// the server that executes the graph decides (and refuses it there).
	cat, err := server.Catalogue(f.kindsDir)
	if err != nil {
		return nil, err
	}
	cat, err = cat.WithHooks(hookNames(config.HookCommands(config.Values(nil)))...)
	if err != nil {
		return nil, err
	}
	cat = cat.WithHooksElsewhere()
	warn := func(e graphs.Error) { fmt.Fprintf(a.stderr, "warning: %s\n", e) }
	opts := graphs.Options{ExtVars: ext, Partial: f.partial, Jsonnet: fileJsonnet{next: graphs.InProcessJsonnet{}}, Catalogue: cat, Warn: warn,
		MaxBytes: graphs.DefaultMaxFileBytes, MaxTotalBytes: graphs.DefaultMaxFileBytes}
	docs, err := graphs.Parse(opts, srcs...)
	if err != nil {
		return nil, reportDocumentErrors(a.stderr, err)
	}
	return &parsedDocuments{docs: docs, files: len(srcs)}, nil
}

// fileJsonnet evaluates each Jsonnet file with its imports resolved from,
// and confined to, the file's own directory.
type fileJsonnet struct {
	next graphs.JsonnetEvaluator
}

func (e fileJsonnet) EvaluateJsonnet(ctx context.Context, req graphs.JsonnetRequest) ([]byte, error) {
	req.ImportDir = filepath.Dir(req.Name)
	return e.next.EvaluateJsonnet(ctx, req)
}

// reportDocumentErrors prints document errors, one per line, and returns
// the error that ends the command with exit code 1. Other errors are
// returned as they are.
func reportDocumentErrors(w io.Writer, err error) error {
	var errs graphs.Errors
	if !errors.As(err, &errs) {
		return err
	}
	files := map[string]bool{}
	for _, e := range errs {
		files[e.Pos.Source] = true
		fmt.Fprintln(w, e.Error())
	}
	fmt.Fprintf(w, "%s in %s\n", plural(len(errs), "error", "errors"), plural(len(files), "file", "files"))
	return &exitError{code: exitFailure}
}

// hookNames are the hooks a command map configures.
func hookNames(commands map[string]string) []string {
	out := make([]string, 0, len(commands))
	for name := range commands {
		out = append(out, name)
	}
	return out
}
