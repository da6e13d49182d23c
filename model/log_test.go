package model

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStepLog(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	end := start.Add(1500 * time.Millisecond)
	tests := []struct {
		name string
		step StepProgress
		want []LogMessage
	}{
		{"running: no log yet", StepProgress{Status: StatusRunning, Action: ActionCreate}, nil},
		{"created", StepProgress{Status: StatusSucceeded, Action: ActionCreate, StartedAt: &start, EndedAt: &end}, []LogMessage{
			{LevelNotice, "created"}, {LevelDebug, "evaluated in 1.50 seconds"},
		}},
		{"updated attributes", StepProgress{Status: StatusSucceeded, Action: ActionUpdate, Changes: []AttrChange{{Path: "mode", Old: "0644", New: "0600"}}}, []LogMessage{
			{LevelNotice, "mode changed '0644' to '0600'"},
		}},
		{"noop update", StepProgress{Status: StatusSucceeded, Action: ActionUpdate, Noop: true, Changes: []AttrChange{{Path: "content", New: "hi"}}}, []LogMessage{
			{LevelNotice, "content: current_value 'absent', should be 'hi' (noop)"},
		}},
		{"noop create", StepProgress{Status: StatusSucceeded, Action: ActionCreate, Noop: true, Changes: []AttrChange{{Path: "mode", New: "0600"}}}, []LogMessage{
			{LevelInfo, "mode: current_value 'absent', should be '0600' (noop)"}, {LevelNotice, "would be created (noop)"},
		}},
		{"unchanged", StepProgress{Status: StatusSucceeded, Action: ActionNoop}, []LogMessage{{LevelDebug, "unchanged"}}},
		{"exec with output and a note", StepProgress{Status: StatusSucceeded, Action: ActionRun, Note: "no byte-exact rollback",
			Changes: []AttrChange{{Path: OutputChange, New: "one\ntwo\n"}}}, []LogMessage{
			{LevelInfo, "output: one"}, {LevelInfo, "output: two"}, {LevelNotice, "executed successfully"}, {LevelWarning, "no byte-exact rollback"},
		}},
		{"failed", StepProgress{Status: StatusFailed, Action: ActionRun, Error: "exit status 1"}, []LogMessage{{LevelErr, "exit status 1"}}},
		{"skipped for a failed dependency", StepProgress{Status: StatusDepFailed, Error: "dependency exec/a failed"}, []LogMessage{
			{LevelWarning, "skipped: dependency exec/a failed"},
		}},
		{"unknown", StepProgress{Status: StatusUnknown, Action: ActionRun}, []LogMessage{{LevelWarning, "outcome unknown: it may or may not have run"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, StepLog(&tt.step))
		})
	}
}

func TestStepLogIsBounded(t *testing.T) {
	s := StepProgress{Status: StatusFailed, Action: ActionUpdate, Error: "boom"}
	for i := range 50 {
		s.Changes = append(s.Changes, AttrChange{Path: "a", Old: strings.Repeat("é", 100), New: i})
	}
	log := StepLog(&s)
	require.Len(t, log, maxLogMessages)
	assert.Equal(t, LogMessage{Level: LevelErr, Message: "… 32 more messages"}, log[len(log)-1], "the count keeps the worst level it hides")
	assert.Contains(t, log[0].Message, "…'", "long values are cut")
	assert.Less(t, len(log[0].Message), 200)
	for _, m := range log {
		assert.True(t, strings.ToValidUTF8(m.Message, "?") == m.Message, "cut on a rune boundary")
	}
}

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]LogLevel{"debug": LevelDebug, "INFO": LevelInfo, "notice": LevelNotice, "warn": LevelWarning, "warning": LevelWarning, "err": LevelErr, "error": LevelErr} {
		got, err := ParseLogLevel(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := ParseLogLevel("crit")
	assert.ErrorContains(t, err, `unknown log level "crit"`)
	assert.Less(t, LevelNotice.Rank(), LevelWarning.Rank())
	assert.Equal(t, -1, LogLevel("").Rank())
}
