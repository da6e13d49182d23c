package workflows

import (
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
)

// A unit's activity that fails returns an error the executor reads for
// the report (describe, ErrorMessage) and for what follows: how many
// attempts it made, whether it left anything to undo and whether it was
// cancelled rather than failing on its own.

// describe is the message of unit u's failed activity: a timeout says
// which, naming the node and its queue when no agent picked the unit up.
func (e *Executor) describe(u *contract.Unit, err error) string {
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		switch timeout.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			return fmt.Sprintf("node %s has no agent polling (task queue %s, waited %s)",
				u.Node, e.opts.queueFor(u.Node), e.opts.NodeWait)
		case enumspb.TIMEOUT_TYPE_HEARTBEAT:
			return "worker stopped responding (heartbeat timeout)"
		default:
			return "timed out"
		}
	}
	return ErrorMessage(err)
}

// ErrorMessage is the innermost meaningful message of an activity or
// workflow error, without the SDK's wrapping ("workflow execution error
// (type: …): …").
func ErrorMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return "cancelled"
	}
	return err.Error()
}

func failedAttempts(err error) int {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		var d contract.FailureDetails
		if app.Details(&d) == nil && d.Attempt > 0 {
			return d.Attempt
		}
	}
	return 1
}

// nothingToUndo reports whether a failed unit's step left nothing for
// Compensate to undo (see contract.FailureDetails).
func nothingToUndo(err error) bool {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		var d contract.FailureDetails
		return app.Details(&d) == nil && d.NothingToUndo
	}
	return false
}

func isCancellation(err error) bool {
	var canceled *temporal.CanceledError
	return errors.As(err, &canceled)
}

// stepError is a step's error naming the step once: providers' errors
// often start with the step's id already.
func stepError(id, msg string) string {
	if strings.HasPrefix(msg, id+": ") {
		return msg
	}
	return id + ": " + msg
}
