package providers

import (
	"fmt"
	"io"
)

// extOutput bounds what one run of a program keeps of its streams.
type extOutput struct {
	Stdout, Stderr streamLimit
	// Protocol marks a run whose stdout is a protocol message: kept whole
	// up to one byte past extOutputLimit, so an oversized one is refused
	// rather than cut.
	Protocol bool
}

var (
	// extProtocolOutput is the bound of an init, state or list run.
	extProtocolOutput = extOutput{Stdout: streamLimit{Head: extOutputLimit + 1}, Protocol: true}
	// extActionOutput is the bound of an action's run: a head and a tail
	// of each stream, shown with the step.
	extActionOutput = extOutput{Stdout: streamLimit{Head: 1 << 10, Tail: 1 << 10}, Stderr: streamLimit{Head: 1 << 10, Tail: 1 << 10}}
	// extLogLimit bounds the log of all of a step's actions together, so a
	// step's result stays small whatever number of actions it ran.
	extLogLimit = streamLimit{Head: 2 << 10, Tail: 2 << 10}
)

// writeActionLog adds what one action printed to a step's log: its name,
// then its stdout and stderr (each head and tail, with a cut notice).
func writeActionLog(w io.Writer, name string, res commandResult) {
	fmt.Fprintf(w, "[%s]\n", name)
	for _, s := range []struct {
		b   []byte
		cut outputCut
	}{{res.Stdout, res.StdoutCut}, {res.Stderr, res.StderrCut}} {
		if len(s.b) == 0 {
			continue
		}
		text := outputText(s.b, s.cut)
		io.WriteString(w, text)
		if text[len(text)-1] != '\n' {
			io.WriteString(w, "\n")
		}
	}
}
