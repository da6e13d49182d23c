package model

// TaskCheck is a Fuel task's test_pre or test_post: a shell command run
// on the task's node, like the task's own command. test_pre exiting 0 says
// the task is already done (it is skipped); test_post exiting non-zero
// fails the task.
type TaskCheck struct {
	Cmd string `json:"cmd" yaml:"cmd"`
	// Timeout is in seconds; 0 means DefaultCheckTimeout.
	Timeout int `json:"timeout,omitempty" yaml:"timeout,omitempty"`
}

// DefaultCheckTimeout is how long a test_pre or test_post may run, in
// seconds, unless it says otherwise.
const DefaultCheckTimeout = 300
