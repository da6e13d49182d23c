package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
)

// Each unit's timeouts fit it: every unit heartbeats with a timeout of
// seconds, so a lost worker is replaced within it; a unit of short steps
// gets a tight start-to-close, a unit of commands the step timeout per
// step; handovers of stopping workers are attempts on top of the step's
// own retries and the crash allowance.
func TestActivityOptionsFitTheUnit(t *testing.T) {
	opts := ExecOptions{ControlQueue: "cairn", StepTimeout: DefaultStepTimeout, HeartbeatTimeout: DefaultHeartbeat, NodeWait: time.Minute}

	files := opts.stepActivityOptions(&contract.Unit{Kind: "file", Count: 100, Batch: true})
	assert.Equal(t, ShortUnitTimeout, files.StartToCloseTimeout)
	assert.Equal(t, 5*time.Second, files.HeartbeatTimeout)
	assert.EqualValues(t, 1+crashAttempts+handoverAttempts, files.RetryPolicy.MaximumAttempts)

	slowFile := opts.stepActivityOptions(&contract.Unit{Kind: "file", Count: 1, Meta: model.Meta{Timeout: "1h"}})
	assert.Equal(t, time.Hour, slowFile.StartToCloseTimeout, "a step's own timeout wins")

	commands := opts.stepActivityOptions(&contract.Unit{Kind: "exec", Count: 3, Batch: true})
	assert.Equal(t, 3*DefaultStepTimeout, commands.StartToCloseTimeout)
	assert.Equal(t, DefaultHeartbeat, commands.HeartbeatTimeout)

	mixed := opts.stepActivityOptions(&contract.Unit{Kind: "", Count: 2, Batch: true})
	assert.Equal(t, 2*DefaultStepTimeout, mixed.StartToCloseTimeout)

	undo := opts.compensationOptions(&contract.Unit{Kind: "exec"})
	assert.Equal(t, DefaultHeartbeat, undo.HeartbeatTimeout)
	assert.EqualValues(t, 3+handoverAttempts, undo.RetryPolicy.MaximumAttempts)

	control := controlOptions("cairn", "prepare apply", 30*time.Minute)
	assert.Equal(t, ControlHeartbeat, control.HeartbeatTimeout)
	assert.LessOrEqual(t, control.HeartbeatTimeout, 10*time.Second, "a lost control activity is noticed in seconds")
}
