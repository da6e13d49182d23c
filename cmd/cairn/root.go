package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes, as Puppet and Terraform use them.
const (
	exitOK      = 0
	exitFailure = 1
	// exitChanges is for `--detailed-exitcode`: success, and the plan has
	// changes; with `--detailed-exitcodes` it is the changes bit (see
	// exitFailures).
	exitChanges = 2
)

// app is what every command shares: where output goes. Commands that talk
// to a server add their connection settings here.
type app struct {
	stdin  io.Reader // answers to confirmations
	stdout io.Writer
	stderr io.Writer
}

// exitError ends the program with code once the command has already
// printed what went wrong; a nil err prints nothing more.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// newRootCmdIO builds the whole command tree reading confirmations from
// stdin and writing to stdout and stderr, so tests run commands in-process.
func newRootCmdIO(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "cairn",
		Short: "Cairn is a durable deployment orchestrator",
		Long: "Cairn validates, plans and applies packages of resources and executes typed task graphs\n" +
			"on a cluster's nodes, each run a Temporal workflow.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without subcommand, show help rather than fail.
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(topLevelCommands(a)...)
	return root
}

// topLevelCommands lists cairn's commands. A new command is a constructor
// taking *app, added here; subcommands of `graph` go in graphSubcommands.
func topLevelCommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		newValidateCmd(a),
		newGraphCmd(a),
		newReleaseCmd(a),
		newClusterCmd(a),
		newPlanCmd(a),
		newApplyCmd(a),
		newStackCmd(a),
		newExportCmd(a),
		newKindsCmd(a),
		newExecCmd(a),
		newAgentCmd(a),
		newNodeCmd(a),
		newPrincipalCmd(a),
		newTokenCmd(a),
		newWhoamiCmd(a),
		newAuditCmd(a),
		newServerCmd(a),
		newWorkerCmd(a),
		newDevCmd(a),
	}
}

// execute runs a command line and returns the process exit code. Errors
// a command already reported carry their code (exitError); any other error
// is printed here.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return executeIO(ctx, args, os.Stdin, stdout, stderr)
}

// executeIO is execute reading confirmations from stdin.
func executeIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmdIO(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return exitFailure
}
