package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// filterStepLogs keeps, in each step's log, the messages at min and above
// (exec show --log-level).
func filterStepLogs(steps []model.StepProgress, min model.LogLevel) {
	for i := range steps {
		kept := steps[i].Log[:0]
		for _, m := range steps[i].Log {
			if m.Level.Rank() >= min.Rank() {
				kept = append(kept, m)
			}
		}
		steps[i].Log = kept
	}
}

// printStepLogs prints the steps' messages as Puppet prints a resource's:
// "Notice: STEP: message", noop steps marked "(noop)" by the message.
func printStepLogs(w io.Writer, steps []model.StepProgress) {
	first := true
	for _, s := range steps {
		for _, m := range s.Log {
			if first {
				fmt.Fprintln(w)
				first = false
			}
			fmt.Fprintf(w, "%s: %s: %s\n", levelLabel(m.Level), s.ID, m.Message)
		}
	}
}

// levelLabel is a level as Puppet labels its messages: Notice, Warning,
// Error for err.
func levelLabel(l model.LogLevel) string {
	if l == "" {
		return ""
	}
	if l == model.LevelErr {
		return "Error"
	}
	return strings.ToUpper(string(l[:1])) + string(l[1:])
}

// logCounts is a report's message counts, most severe first: "1 err,
// 2 notice"; "" when there are none.
func logCounts(counts map[model.LogLevel]int) string {
	var parts []string
	for i := len(model.LogLevels) - 1; i >= 0; i-- {
		if n := counts[model.LogLevels[i]]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, model.LogLevels[i]))
		}
	}
	return strings.Join(parts, ", ")
}
