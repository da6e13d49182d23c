package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

func newApplyCmd(a *app) *cobra.Command {
	var (
		df       documentFlags
		stackRef string
		run      runFlags
		detailed bool
		bitmask  bool
		cluster  string
		pf       paramFlags
		verbose  bool
		approval approvalFlags
	)
	cmd := &cobra.Command{
		Use:   "apply --stack STACK [-f] [FILE|DIR...]",
		Short: "Apply a package to a stack and follow the execution to its end",
		Long: "Apply sends the package to the server, which starts an apply execution of it on the\n" +
			"stack: resources are created or updated in dependency order, resources that left the\n" +
			"package are deleted, and a failure rolls back what was changed (--on-failure). Without\n" +
			"files the stack's URLs are applied (with the parameters given). Jsonnet is evaluated here, with imports relative\n" +
			"to the importing file. A directory brings its *.yaml, *.yml, *.json and *.jsonnet files, in name order.\n" +
			"A package larger than one request may be (over 8 MiB, or refused with 413) is sent in parts of\n" +
			"whole documents, each checked by the server as it arrives, then applied as one package.\n\n" +
			"Apply shows a live progress bar and a line per step, then a report of what was created,\n" +
			"updated, deleted, unchanged, failed and skipped. --wait=false prints the execution id\n" +
			"and returns at once (follow it with `cairn exec watch ID`).\n\n" +
			"Exit codes: 0 success; 1 failure, rollback or cancel; with --detailed-exitcode 2 when\n" +
			"the apply changed something. With --detailed-exitcodes, Puppet's bitmask: 0 nothing\n" +
			"changed and nothing failed, 2 changes, 4 failed steps, 6 changes and failed steps (1\n" +
			"when the execution ended with no failed step, as on cancel); changes a rollback undid\n" +
			"do not count.\n\n" +
			"--approve-required plans instead and waits for an approval: it prints the plan as\n" +
			"`cairn plan` does and the execution id, and returns (exit codes as plan's, with\n" +
			"--detailed-exitcode(s) 2 when the plan has changes); `cairn exec approve ID` applies\n" +
			"exactly that plan, `cairn exec reject ID` ends it.",
		Example: "  cairn apply --stack web site.yaml\n" +
			"  cairn apply --stack web -f site/\n" +
			"  cairn apply --stack web --env SITE=prod --secret DB_PASSWORD=… site.yaml\n" +
			"  cairn apply --stack web --wait=false deploy.jsonnet\n" +
			"  cairn apply --stack infra --var region=europe-west1 --var-file prod.yaml -v infra.yaml\n" +
			"  cairn apply --stack web --detailed-exitcodes --on-failure continue site.yaml\n" +
			"  cairn apply --stack web --approve-required --approval-timeout 72h site.yaml",
		Args: cobra.ArbitraryArgs,
	}
	r := newRemote(a, cmd, formatTable)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if err := run.check(); err != nil {
			return err
		}
		if err := approval.check(); err != nil {
			return err
		}
		c, st, err := r.stack(ctx, stackRef)
		if err != nil {
			return err
		}
		pl, err := optionalPayload(ctx, a, &df, df.paths(args))
		if err != nil {
			return err
		}
		params, err := pf.params()
		if err != nil {
			return err
		}
		if params.Vars, err = pl.deploysterVars(params.Vars); err != nil {
			return err
		}
		params.Verbose = verbose
		ex, err := c.Apply(ctx, st.ID, pl.document(), client.ApplyOptions{OnFailure: model.OnFailure(run.onFailure), Parallelism: run.parallelism, Cluster: cluster,
			Params: params, ApproveRequired: approval.required, ApprovalTimeout: approval.timeout})
		if err != nil {
			return apiFailure(a, err, pl.detailNames)
		}
		// A stack requiring approvals (four eyes) has every apply wait.
		if approval.required || ex.Awaiting == "approval" {
			return r.awaitingApproval(ctx, c, st, ex, detailed || bitmask)
		}
		return r.started(ctx, c, ex, run.wait, newExitMode(detailed, bitmask))
	}
	f := cmd.Flags()
	df.register(f)
	df.registerFiles(f)
	pf.register(f)
	f.StringVar(&stackRef, "stack", "", "stack id or name (required)")
	run.register(f, model.OnFailureRollback)
	f.BoolVarP(&verbose, "verbose", "v", false, "ask external programs for more output (the protocol's verbose flag)")
	approval.register(cmd)
	f.StringVar(&cluster, "cluster", "", "the cluster whose nodes the package's targeted resources run on")
	f.BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when the apply changed something (0 when it changed nothing, 1 on failure)")
	f.BoolVar(&bitmask, "detailed-exitcodes", false, "Puppet's exit codes: 0 no changes, 2 changes, 4 failures, 6 changes and failures")
	cmd.MarkFlagsMutuallyExclusive("detailed-exitcode", "detailed-exitcodes")
	r.out.registerColor(f)
	_ = cmd.MarkFlagRequired("stack")
	return cmd
}

// runFlags steer an execution: whether to wait for it, what to do on
// failure and how many steps run at once.
type runFlags struct {
	wait        bool
	onFailure   string
	parallelism int
}

func (f *runFlags) register(fs *pflag.FlagSet, def model.OnFailure) {
	fs.BoolVar(&f.wait, "wait", true, "follow the execution to its end; --wait=false prints its id and returns")
	fs.StringVar(&f.onFailure, "on-failure", "", fmt.Sprintf("on a failed step: rollback, stop, continue or pause (default %s)", def))
	fs.IntVar(&f.parallelism, "parallelism", 0, "steps in flight at once (default: the server's)")
}

func (f *runFlags) check() error {
	if f.onFailure != "" && !slices.Contains([]model.OnFailure{model.OnFailureRollback, model.OnFailureStop, model.OnFailureContinue, model.OnFailurePause}, model.OnFailure(f.onFailure)) {
		return fmt.Errorf("--on-failure %q: want rollback, stop, continue or pause", f.onFailure)
	}
	if f.parallelism < 0 {
		return fmt.Errorf("--parallelism %d: want a positive number", f.parallelism)
	}
	return nil
}

// started reports an execution the command started: with wait it follows
// the execution and reports it, else it prints the id (or the execution,
// with -o json|yaml) and returns.
func (r *remote) started(ctx context.Context, c *client.Client, ex *model.Execution, wait bool, mode exitMode) error {
	if ex.Awaiting == "approval" {
		// Under a four-eyes policy: waiting would wait for other people.
		if err := r.print(ex, func(w io.Writer) error {
			_, err := fmt.Fprintln(w, ex.ID)
			return err
		}); err != nil {
			return err
		}
		why := "it awaits approval"
		if ex.Approval != nil && ex.Approval.Policy != "" {
			why = ex.Approval.Policy
		}
		fmt.Fprintf(r.a.stderr, "%s execution %s planned: %s; approve it with: cairn exec approve %s\n", ex.Kind, ex.ID, why, ex.ID)
		return nil
	}
	if !wait {
		if err := r.print(ex, func(w io.Writer) error {
			_, err := fmt.Fprintln(w, ex.ID)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(r.a.stderr, "started %s execution %s; follow it with: cairn exec watch %s\n", ex.Kind, ex.ID, ex.ID)
		return nil
	}
	return r.followAndReport(ctx, c, ex.ID, mode)
}

// followAndReport follows an execution with a progress display, then
// reports it: the Puppet-style report for -o table (progress on stdout),
// the execution as JSON or YAML otherwise (progress on stderr). mode
// chooses the exit code (see exitMode).
func (r *remote) followAndReport(ctx context.Context, c *client.Client, id string, mode exitMode) error {
	progressTo := r.a.stdout
	if !r.table() {
		progressTo = r.a.stderr
	}
	done, err := r.watch(ctx, c, progressTo, id)
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted: the execution itself runs on.
			return &exitError{code: exitFailure, err: fmt.Errorf("stopped following execution %s, which keeps running; follow it again with: cairn exec watch %s", id, id)}
		}
		return apiFailure(r.a, err, nil)
	}
	// The done event may come before the report is readable; ask once
	// more when it is missing.
	if done.Report == nil && done.Kind != model.ExecDryRun {
		if again, err := c.GetExecution(ctx, id); err == nil {
			done = again
		}
	}
	var outcome error
	if r.table() {
		outcome = printReport(r.a.stdout, palette{on: r.out.useColor(r.a.stdout)}, done)
	} else {
		if err := printData(r.a.stdout, r.out.format, done); err != nil {
			return err
		}
		outcome = executionOutcome(done)
	}
	return exitFor(mode, done, outcome)
}
