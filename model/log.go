package model

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// LogLevel is one of Puppet's log levels, from the least to the most
// severe: debug (what happened, shown on request), info (what the run is
// doing), notice (state changes), warning (trouble that did not stop the
// resource) and err (the resource failed).
type LogLevel string

const (
	LevelDebug   LogLevel = "debug"
	LevelInfo    LogLevel = "info"
	LevelNotice  LogLevel = "notice"
	LevelWarning LogLevel = "warning"
	LevelErr     LogLevel = "err"
)

// LogLevels are the levels from the least to the most severe.
var LogLevels = [...]LogLevel{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelErr}

// Rank orders levels: debug 0 … err 4; -1 for no level.
func (l LogLevel) Rank() int {
	for i, v := range LogLevels {
		if v == l {
			return i
		}
	}
	return -1
}

// ParseLogLevel reads a level as Puppet spells it (error and warn are
// accepted for err and warning).
func ParseLogLevel(s string) (LogLevel, error) {
	switch l := LogLevel(strings.ToLower(strings.TrimSpace(s))); l {
	case "error":
		return LevelErr, nil
	case "warn":
		return LevelWarning, nil
	default:
		if l.Rank() >= 0 {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown log level %q (want debug, info, notice, warning or err)", s)
}

// LogMessage is one message of a resource's log.
type LogMessage struct {
	Level   LogLevel `json:"level"`
	Message string   `json:"message"`
}

// Bounds of a step's log: values are cut, output lines and changes past
// the first few are counted in one message.
const (
	maxLogValue    = 80
	maxLogMessages = 20
)

// StepLog is a step's log as Puppet writes a resource's: a notice for each
// change it made (or, noop, would make: "current_value …, should be …
// (noop)"), one for a resource created or removed (its attributes at
// info), info for the program's output, a warning for a note or a
// skip, err for its error, and debug for what stayed as it was and the
// time it took. A step still pending or running has no log. At most about
// twenty messages: the rest are counted in one.
func StepLog(s *StepProgress) []LogMessage {
	var out []LogMessage
	add := func(l LogLevel, format string, args ...any) {
		out = append(out, LogMessage{Level: l, Message: fmt.Sprintf(format, args...)})
	}
	switch s.Status {
	case StatusPending, StatusRunning, "":
		return nil
	case StatusSkipped, StatusDepFailed:
		if s.Error != "" {
			add(LevelWarning, "skipped: %s", s.Error)
		} else {
			add(LevelInfo, "skipped")
		}
		return out
	case StatusCanceled:
		add(LevelWarning, "canceled")
	case StatusUnknown:
		add(LevelWarning, "outcome unknown: it may or may not have run")
	case StatusRolledBack:
		add(LevelNotice, "rolled back")
	}
	changed := 0
	for _, c := range s.Changes {
		if c.Path == OutputChange {
			text, _ := c.New.(string)
			for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				if line != "" {
					add(LevelInfo, "output: %s", cut(line))
				}
			}
			continue
		}
		changed++
		// A created or removed resource is one notice (below); its
		// attributes are detail.
		level := LevelNotice
		if s.Action == ActionCreate || s.Action == ActionDelete {
			level = LevelInfo
		}
		switch {
		case s.Noop:
			add(level, "%s: current_value %s, should be %s (noop)", c.Path, logValue(c.Old), logValue(c.New))
		default:
			add(level, "%s changed %s to %s", c.Path, logValue(c.Old), logValue(c.New))
		}
	}
	if s.Status == StatusSucceeded || s.Status == StatusWaiting {
		noop := ""
		if s.Noop {
			noop = " (noop)"
		}
		switch s.Action {
		case ActionCreate:
			add(LevelNotice, "%s%s", pick(s.Noop, "would be created", "created"), noop)
		case ActionDelete:
			add(LevelNotice, "%s%s", pick(s.Noop, "would be removed", "removed"), noop)
		case ActionRun:
			add(LevelNotice, "%s%s", pick(s.Noop, "would run", "executed successfully"), noop)
		case ActionUpdate:
			if changed == 0 {
				add(LevelNotice, "%s%s", pick(s.Noop, "would be updated", "updated"), noop)
			}
		case ActionNoop, "":
			add(LevelDebug, "unchanged%s", noop)
		}
	}
	if s.Note != "" {
		add(LevelWarning, "%s", s.Note)
	}
	if s.Error != "" {
		add(LevelErr, "%s", s.Error)
	}
	if s.StartedAt != nil && s.EndedAt != nil {
		add(LevelDebug, "evaluated in %.2f seconds", s.EndedAt.Sub(*s.StartedAt).Seconds())
	}
	if len(out) > maxLogMessages {
		rest := out[maxLogMessages-1:]
		worst := LevelDebug
		for _, m := range rest {
			if m.Level.Rank() > worst.Rank() {
				worst = m.Level
			}
		}
		out = append(out[:maxLogMessages-1], LogMessage{Level: worst, Message: fmt.Sprintf("… %d more messages", len(rest))})
	}
	return out
}

func pick(noop bool, ifNoop, otherwise string) string {
	if noop {
		return ifNoop
	}
	return otherwise
}

// logValue is a change's value as Puppet quotes it, cut to a readable
// length; an absent value is "absent".
func logValue(v any) string {
	if v == nil {
		return "'absent'"
	}
	return "'" + cut(fmt.Sprint(v)) + "'"
}

func cut(s string) string {
	if len(s) <= maxLogValue {
		return s
	}
	i := maxLogValue
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
