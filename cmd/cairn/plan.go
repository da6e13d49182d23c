package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

func newPlanCmd(a *app) *cobra.Command {
	var (
		df       documentFlags
		stackRef string
		detailed bool
		opts     client.DryRunOptions
		pf       paramFlags
	)
	cmd := &cobra.Command{
		Use:   "plan --stack STACK [-f] [FILE|DIR...]",
		Short: "Show what applying a package to a stack would change (a dry-run on the server)",
		Long: "Plan sends the package to the server, which dry-runs it against the stack and answers\n" +
			"what an apply would do: + create, ~ update (attribute old → new), - delete, > run.\n" +
			"Without files the stack's URLs are planned. Jsonnet is evaluated here, with imports\n" +
			"relative to the importing file; the server receives JSON. A package larger than one request may be\n" +
			"is sent in parts (see cairn apply --help).\n\n" +
			"Exit codes: 0 success; 1 failure; with --detailed-exitcode, 0 means no changes and 2\n" +
			"means the plan has changes.",
		Example: "  cairn plan --stack web --env SITE=prod --secrets-file prod.secrets site.yaml\n  cairn plan --stack web site.yaml\n  cairn plan --stack web --detailed-exitcode deploy.jsonnet || test $? -eq 2",
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		c, st, err := r.stack(ctx, stackRef)
		if err != nil {
			return err
		}
		pl, err := optionalPayload(ctx, a, &df, df.paths(args))
		if err != nil {
			return err
		}
		if opts.Params, err = pf.params(); err != nil {
			return err
		}
		if opts.Params.Vars, err = pl.deploysterVars(opts.Params.Vars); err != nil {
			return err
		}
		plan, err := dryRun(ctx, c, st.ID, pl.document(), opts, r.poll)
		if err != nil {
			return apiFailure(a, err, pl.detailNames)
		}
		if err := r.print(plan, func(w io.Writer) error {
			printPlan(w, palette{on: r.out.useColor(w)}, st, plan)
			return nil
		}); err != nil {
			return err
		}
		return planExit(plan, detailed)
	}
	f := cmd.Flags()
	df.register(f)
	df.registerFiles(f)
	pf.register(f)
	f.StringVar(&stackRef, "stack", "", "stack id or name (required)")
	f.BoolVar(&detailed, "detailed-exitcode", false, "exit 0 when nothing would change, 2 when something would, 1 on failure")
	f.IntVar(&opts.Parallelism, "parallelism", 0, "steps read at once (default: the server's)")
	f.StringVar(&opts.Cluster, "cluster", "", "the cluster whose nodes the package's targeted resources run on")
	f.BoolVar(&opts.RunGuards, "run-guards", false, "run exec guard commands (unless, onlyif) to decide the plan; by default a plan runs no command")
	r.out.registerColor(f)
	_ = cmd.MarkFlagRequired("stack")
	return cmd
}

// dryRun asks for a plan, following the dry-run when the server answers
// before it finished.
func dryRun(ctx context.Context, c *client.Client, stackID string, doc *client.Document, opts client.DryRunOptions, poll time.Duration) (*model.DryRun, error) {
	plan, ex, err := c.DryRun(ctx, stackID, doc, opts)
	if err != nil {
		return nil, err
	}
	if plan != nil {
		return plan, nil
	}
	done, err := c.Wait(ctx, ex.ID, poll)
	if err != nil {
		return nil, err
	}
	return planOf(done)
}

// planOf is the plan a dry-run execution shows (its steps, summary and
// failures); an error when it has none.
func planOf(ex *model.Execution) (*model.DryRun, error) {
	if ex.Plan == nil {
		msg := "the dry-run " + ex.ID + " did not produce a plan"
		if ex.Error != "" {
			msg += ": " + ex.Error
		}
		return nil, fmt.Errorf("%s", msg)
	}
	out := &model.DryRun{
		ExecutionID: ex.ID, Summary: ex.Plan.Summary, Diff: ex.Plan.Steps,
		MissingEnvRefs: ex.Plan.MissingEnvRefs, MissingSecrets: ex.Plan.MissingSecrets,
	}
	if ex.Report != nil && ex.Approval == nil {
		out.Failures = ex.Report.Failures
	}
	return out, nil
}

// planExit is the exit code of a plan: 1 when steps could not be planned,
// else with detailed 2 for changes and 0 for none.
func planExit(plan *model.DryRun, detailed bool) error {
	if len(plan.Failures) > 0 || planStepErrors(plan) > 0 {
		return &exitError{code: exitFailure}
	}
	if detailed && plan.Summary.Changes() {
		return &exitError{code: exitChanges}
	}
	return nil
}

func planStepErrors(plan *model.DryRun) int {
	n := 0
	for _, s := range plan.Diff {
		if s.Error != "" {
			n++
		}
	}
	return n
}

// printPlan renders a plan the way Terraform does: one block per step
// that changes something, with its attributes, then the summary.
func printPlan(w io.Writer, pal palette, st *model.StackRecord, plan *model.DryRun) {
	fmt.Fprintf(w, "Stack %s (%s), dry-run %s\n\n", st.Name, st.ID, plan.ExecutionID)
	printPlanBody(w, pal, plan)
}

// printPlanBody renders a plan's steps that change something, its errors
// and warnings, and its summary line.
func printPlanBody(w io.Writer, pal palette, plan *model.DryRun) {
	changing := 0
	for _, s := range plan.Diff {
		if s.Action != model.ActionNoop && s.Action != "" {
			changing++
		}
	}
	if changing > 0 {
		fmt.Fprintln(w, "Cairn will perform the following actions:")
		fmt.Fprintln(w)
		for _, s := range plan.Diff {
			if s.Action == model.ActionNoop || s.Action == "" {
				continue
			}
			printPlanStep(w, pal, s)
			fmt.Fprintln(w)
		}
	}
	for _, s := range plan.Diff {
		if s.Error != "" {
			fmt.Fprintf(w, "%s %s: %s\n", pal.red("Error:"), s.ID, s.Error)
		}
	}
	for _, s := range plan.Diff {
		if s.Note != "" {
			fmt.Fprintf(w, "%s %s: %s\n", pal.yellow("Note:"), s.ID, s.Note)
		}
	}
	for _, f := range plan.Failures {
		if !stepHasError(plan, f.Step) {
			fmt.Fprintf(w, "%s %s: %s\n", pal.red("Error:"), f.Step, f.Error)
		}
	}
	printMissing(w, pal, plan.MissingEnvRefs, "", plan.MissingVars)
	if len(plan.MissingSecrets) > 0 {
		fmt.Fprintf(w, "%s secrets not found: %s\n", pal.yellow("Warning:"), strings.Join(plan.MissingSecrets, ", "))
	}
	sum := plan.Summary
	if !sum.Changes() {
		fmt.Fprintf(w, "%s The stack matches the package (%s unchanged).\n", pal.bold("No changes."), plural(sum.Noop, "resource", "resources"))
		return
	}
	refresh := ""
	if sum.Refresh > 0 {
		refresh = fmt.Sprintf(" (%s refreshed)", countColor(sum.Refresh, pal.cyan))
	}
	fmt.Fprintf(w, "%s %s to create, %s to update, %s to delete, %s to run%s, %d unchanged.\n", pal.bold("Plan:"),
		countColor(sum.Create, pal.green), countColor(sum.Update, pal.yellow), countColor(sum.Delete, pal.red),
		countColor(sum.Run, pal.cyan), refresh, sum.Noop)
}

func stepHasError(plan *model.DryRun, id string) bool {
	for _, s := range plan.Diff {
		if s.ID == id && s.Error != "" {
			return true
		}
	}
	return false
}

func countColor(n int, col func(string) string) string {
	if n == 0 {
		return "0"
	}
	return col(strconv.Itoa(n))
}

// planSymbol is the sign and colour of an action.
func planSymbol(pal palette, a model.Action) (string, string) {
	switch a {
	case model.ActionCreate:
		return pal.green("+"), "will be created"
	case model.ActionUpdate:
		return pal.yellow("~"), "will be updated"
	case model.ActionDelete:
		return pal.red("-"), "will be deleted"
	case model.ActionRun:
		return pal.cyan(">"), "will run"
	}
	return " ", string(a)
}

func printPlanStep(w io.Writer, pal palette, s model.PlanStep) {
	sign, what := planSymbol(pal, s.Action)
	if s.Refresh {
		what += " (refresh: a resource it subscribes to would change)"
	}
	name := s.ID
	if name == "" {
		name = s.Kind + "/" + s.Name
	}
	if s.Node != "" && !strings.Contains(name, "@") {
		name += " on " + s.Node
	}
	fmt.Fprintf(w, "  %s %s %s\n", sign, pal.bold(name), what)
	width := 0
	for _, c := range s.Changes {
		width = max(width, len(c.Path))
	}
	for _, c := range s.Changes {
		path := c.Path + strings.Repeat(" ", width-len(c.Path))
		switch {
		case s.Action == model.ActionDelete || c.New == nil && c.Old != nil:
			suffix := ""
			if s.Action != model.ActionDelete {
				suffix = " → null"
			}
			fmt.Fprintf(w, "      %s %s = %s%s\n", pal.red("-"), path, formatValue(c.Old), suffix)
		case c.Old == nil:
			fmt.Fprintf(w, "      %s %s = %s\n", pal.green("+"), path, formatValue(c.New))
		default:
			fmt.Fprintf(w, "      %s %s = %s → %s\n", pal.yellow("~"), path, formatValue(c.Old), formatValue(c.New))
		}
	}
}

// formatValue renders an attribute value: strings quoted, the rest as
// compact JSON.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// printMissing warns of the env refs and variables a package reads that
// have no value (envWhere, when set, says where else a value may come
// from), as plan and validate list them.
func printMissing(w io.Writer, pal palette, env []string, envWhere string, vars []string) {
	if len(env) > 0 {
		fmt.Fprintf(w, "%s environment references without a value%s: %s\n", pal.yellow("Warning:"), envWhere, strings.Join(env, ", "))
	}
	if len(vars) > 0 {
		fmt.Fprintf(w, "%s variables without a value (give them with --var or --var-file): %s\n", pal.yellow("Warning:"), strings.Join(vars, ", "))
	}
}
