package main

import (
	"github.com/cairn-io/cairn/model"
)

// Puppet's --detailed-exitcodes bits: a run that changed something sets
// exitChanges (2), one where steps failed sets exitFailures (4); both give 6.
const exitFailures = 4

// exitMode chooses the exit code of a finished execution.
type exitMode int

const (
	// exitPlain: 0 success, 1 failure, rollback or cancel.
	exitPlain exitMode = iota
	// exitDetailed (--detailed-exitcode, as plan and Terraform): 2 when a
	// successful execution changed something.
	exitDetailed
	// exitBitmask (--detailed-exitcodes, as Puppet): 0 nothing changed and
	// nothing failed, 2 changes, 4 failures, 6 changes and failures; 1 when
	// the execution ended without a failed step to blame (canceled, an
	// error of its own).
	exitBitmask
)

// newExitMode is the mode the two flags ask for; cobra keeps them
// mutually exclusive.
func newExitMode(detailed, bitmask bool) exitMode {
	switch {
	case bitmask:
		return exitBitmask
	case detailed:
		return exitDetailed
	}
	return exitPlain
}

// exitFor is the error carrying ex's exit code under mode, nil for 0.
// outcome is the plain outcome (nil when ex completed with no failed step).
func exitFor(mode exitMode, ex *model.Execution, outcome error) error {
	switch mode {
	case exitBitmask:
		return bitmaskExit(ex)
	case exitDetailed:
		if outcome == nil && ex.Report != nil && ex.Report.Changed() {
			return &exitError{code: exitChanges}
		}
	}
	return outcome
}

// bitmaskExit is Puppet's detailed exit code of ex. Changes a rollback
// undid do not count: the system is left as it was.
func bitmaskExit(ex *model.Execution) error {
	r := ex.Report
	failed := r != nil && r.Failed > 0
	if !failed && ex.Status != model.ExecCompleted {
		return &exitError{code: exitFailure}
	}
	code := exitOK
	if r != nil && r.Changed() && !r.RolledBack && ex.Status != model.ExecRolledBack {
		code |= exitChanges
	}
	if failed {
		code |= exitFailures
	}
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}
