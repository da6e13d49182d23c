package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// defaultPollInterval is how often an execution's changes are asked for
// when its event stream is unavailable.
const defaultPollInterval = 500 * time.Millisecond

// follower follows an execution to its end: it reads the server-sent
// events of GET /v1/executions/{id}/events and, when they fail (or the
// server refuses another client), asks GET /v1/executions/{id}/steps?since=
// for what changed. Every change goes to the progress display.
type follower struct {
	c        *client.Client
	progress *progress
	// notes receives what is said about the following itself (a fallback
	// to polling).
	notes io.Writer
	poll  time.Duration
}

// follow returns the finished execution.
func (f *follower) follow(ctx context.Context, id string) (*model.Execution, error) {
	var final *model.Execution
	var asked time.Time
	err := f.c.Events(ctx, id, func(ev client.Event) error {
		switch ev.Type {
		case client.EventStatus:
			f.progress.status(ev.Execution)
		case client.EventStep:
			// Status events come only when the status changes, often before
			// the steps are known; ask for the total once it should be.
			if !f.progress.totalKnown && time.Since(asked) > 250*time.Millisecond {
				asked = time.Now()
				if ex, err := f.c.GetExecution(ctx, id); err == nil {
					f.progress.status(ex)
				}
			}
			f.progress.step(*ev.Step)
		case client.EventDone:
			final = ev.Execution
			f.progress.snapshot(final)
		}
		return nil
	})
	if err == nil && final != nil {
		f.progress.end()
		return final, nil
	}
	if ctx.Err() != nil {
		f.progress.end()
		return nil, ctx.Err()
	}
	var ae *client.APIError
	if errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403 || ae.Status == 404) {
		f.progress.end()
		return nil, err
	}
	f.progress.interrupt()
	fmt.Fprintf(f.notes, "events of %s unavailable (%v); polling instead\n", id, err)
	return f.pollUntilDone(ctx, id)
}

// pollUntilDone follows the execution by cursor: every interval it asks
// GET /v1/executions/{id}/steps?since= for the steps that changed (every
// step the first time), and reads the whole execution only when its
// status changed and once it ended, so a poll costs the server what
// changed, not every step.
func (f *follower) pollUntilDone(ctx context.Context, id string) (*model.Execution, error) {
	interval := f.poll
	if interval <= 0 {
		interval = defaultPollInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	defer f.progress.end()
	cursor := ""
	var status model.ExecutionStatus
	for {
		for more := true; more; {
			page, err := f.c.StepsSince(ctx, id, cursor, 0)
			if err != nil {
				return nil, err
			}
			for _, st := range page.Steps {
				f.progress.step(st)
			}
			f.progress.total = max(f.progress.total, page.Total)
			f.progress.totalKnown = f.progress.totalKnown || page.Total > 0
			cursor, more = page.Cursor, page.More
			// The workflow says it ended a moment before it closes: ask
			// for the execution until it has.
			ended := (&model.Execution{Status: page.Status}).Finished()
			if page.Status != status || ended {
				status = page.Status
				ex, err := f.c.GetExecution(ctx, id)
				if err != nil {
					return nil, err
				}
				f.progress.snapshot(ex)
				if ex.Finished() {
					return ex, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// progress draws an execution's progress: a line per step as it finishes
// and a bar of steps done. On a terminal the bar stays on the last line
// and is redrawn in place; elsewhere each step line starts with the bar,
// so logs show the progress too.
type progress struct {
	w     io.Writer
	live  bool // redraw the bar in place (a terminal)
	pal   palette
	id    string
	start time.Time

	total      int
	totalKnown bool // the server said how many steps there are
	running    int
	steps      map[string]model.StepProgress
	done       map[string]bool
	drawn      bool // the live bar is on screen
	waiting    map[string]bool
	// awaiting is what the execution was last said to await ("approval").
	awaiting string
}

func newProgress(w io.Writer, live bool, pal palette, id string) *progress {
	return &progress{w: w, live: live, pal: pal, id: id, start: time.Now(),
		steps: map[string]model.StepProgress{}, done: map[string]bool{}, waiting: map[string]bool{}}
}

// status takes the counts of a status event.
func (p *progress) status(ex *model.Execution) {
	if ex == nil {
		return
	}
	p.counts(ex)
	p.redraw()
}

func (p *progress) counts(ex *model.Execution) {
	if ex.Awaiting != p.awaiting {
		p.awaiting = ex.Awaiting
		if ex.Awaiting == "approval" {
			p.clear()
			fmt.Fprintf(p.w, "%s approval: approve with: cairn exec approve %s; reject with: cairn exec reject %s\n",
				p.pal.yellow("awaiting"), p.id, p.id)
		}
	}
	if ex.Progress != nil {
		p.total = max(p.total, ex.Progress.Total)
		p.totalKnown = p.totalKnown || ex.Progress.Total > 0
		p.running = ex.Progress.Running
	}
}

// snapshot takes a whole execution (polled, or the final one): every step
// that changed is shown as a step event would be.
func (p *progress) snapshot(ex *model.Execution) {
	if ex == nil {
		return
	}
	p.counts(ex)
	for _, st := range ex.Steps {
		if old, ok := p.steps[st.ID]; ok && old.Status == st.Status && old.Action == st.Action && old.Attempts == st.Attempts && old.Error == st.Error {
			continue
		}
		p.step(st)
	}
	p.redraw()
}

// step records a step's new state and prints a line when it finished (or
// waits for a decision, or was rolled back).
func (p *progress) step(st model.StepProgress) {
	old, seen := p.steps[st.ID]
	p.steps[st.ID] = st
	p.total = max(p.total, len(p.steps))
	if seen && old.Status == st.Status {
		p.redraw()
		return
	}
	if finished(st.Status) {
		p.done[st.ID] = true
	}
	if st.Status == model.StatusWaiting || st.Status == model.StatusUnknown {
		p.waiting[st.ID] = true
	} else {
		delete(p.waiting, st.ID)
	}
	if line := p.stepLine(st); line != "" {
		p.clear()
		if p.live {
			fmt.Fprintln(p.w, line)
		} else {
			fmt.Fprintf(p.w, "%s %s\n", p.bar(), line)
		}
	}
	p.redraw()
}

// finished reports whether a step status is final for counting.
func finished(s model.Status) bool {
	switch s {
	case model.StatusSucceeded, model.StatusFailed, model.StatusSkipped, model.StatusDepFailed,
		model.StatusRolledBack, model.StatusCanceled:
		return true
	}
	return false
}

// stepLine describes a step that reached a state worth a line.
func (p *progress) stepLine(st model.StepProgress) string {
	name := st.ID
	if name == "" {
		name = st.Kind + "/" + st.Name
	}
	took := ""
	if st.StartedAt != nil && st.EndedAt != nil {
		took = p.pal.dim(" (" + formatDuration(st.EndedAt.Sub(*st.StartedAt)) + ")")
	}
	attempts := ""
	if st.Attempts > 1 {
		attempts = fmt.Sprintf(" after %d attempts", st.Attempts)
	}
	switch st.Status {
	case model.StatusSucceeded:
		if why, ok := skippedWhy(st); ok {
			return p.pal.dim("skipped") + " " + name + why
		}
		return outcomeWord(p.pal, st.Action) + " " + name + attempts + took
	case model.StatusFailed:
		return p.pal.red("failed") + " " + name + attempts + ": " + st.Error
	case model.StatusSkipped:
		why := ""
		if st.Error != "" {
			why = ": " + st.Error
		}
		return p.pal.dim("skipped") + " " + name + why
	case model.StatusDepFailed:
		return p.pal.dim("skipped") + " " + name + " (a dependency failed)"
	case model.StatusRolledBack:
		return p.pal.yellow("rolled back") + " " + name
	case model.StatusCanceled:
		return p.pal.dim("canceled") + " " + name
	case model.StatusUnknown:
		return p.pal.yellow("unknown") + " " + name + ": the command may or may not have run" +
			fmt.Sprintf("\n  decide with: cairn exec decide %s --step %s --action retry|skip|rollback|abort (retry runs it again, skip takes it as done)", p.id, st.ID)
	case model.StatusWaiting:
		msg := p.pal.yellow("waiting") + " " + name
		if st.Error != "" {
			msg += ": " + st.Error
		}
		return msg + fmt.Sprintf("\n  decide with: cairn exec decide %s --step %s --action retry|skip|rollback|abort", p.id, st.ID)
	}
	return ""
}

// skippedWhy recognises a step that succeeded without running because it
// was not selected or its condition was false (the executor reports it
// as a noop with a "skipped" change saying why).
func skippedWhy(st model.StepProgress) (string, bool) {
	if st.Action != model.ActionNoop && st.Action != "" {
		return "", false
	}
	for _, c := range st.Changes {
		if c.Path == "skipped" {
			if c.New != nil && fmt.Sprint(c.New) != "" {
				return " (" + fmt.Sprint(c.New) + ")", true
			}
			return "", true
		}
	}
	return "", false
}

// outcomeWord is what a succeeded step did, coloured like a plan.
func outcomeWord(pal palette, a model.Action) string {
	switch a {
	case model.ActionCreate:
		return pal.green("created")
	case model.ActionUpdate:
		return pal.yellow("updated")
	case model.ActionDelete:
		return pal.red("deleted")
	case model.ActionRun:
		return pal.cyan("ran")
	default:
		return pal.dim("unchanged")
	}
}

const barWidth = 24

// bar renders "[=========>      ]  9/16".
func (p *progress) bar() string {
	total := max(p.total, len(p.done))
	filled := 0
	if total > 0 {
		filled = len(p.done) * barWidth / total
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := range barWidth {
		switch {
		case i < filled:
			b.WriteByte('=')
		case i == filled && filled < barWidth && len(p.done) > 0:
			b.WriteByte('>')
		default:
			b.WriteByte(' ')
		}
	}
	b.WriteByte(']')
	digits := len(fmt.Sprint(total))
	fmt.Fprintf(&b, " %*d/%d", digits, len(p.done), total)
	return b.String()
}

// redraw puts the live bar on the last line.
func (p *progress) redraw() {
	if !p.live {
		return
	}
	line := p.bar() + fmt.Sprintf(" steps  %s", formatDuration(time.Since(p.start).Truncate(time.Second)))
	if p.running > 0 {
		line += fmt.Sprintf("  %d running", p.running)
	}
	if len(p.waiting) > 0 {
		line += fmt.Sprintf("  %d waiting", len(p.waiting))
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.drawn = true
}

// clear removes the live bar before a line is printed.
func (p *progress) clear() {
	if p.live && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// interrupt ends the live line so a note can be printed.
func (p *progress) interrupt() {
	if p.live && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// end leaves the last bar on screen.
func (p *progress) end() {
	if p.live {
		p.redraw()
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// printReport writes the Puppet-style account of a finished execution and
// returns the error that sets the exit code: nil when it completed with no
// failure.
func printReport(w io.Writer, pal palette, ex *model.Execution) error {
	verb := map[model.ExecutionKind]string{
		model.ExecApply: "Apply", model.ExecDestroy: "Destroy", model.ExecGraph: "Graph execution", model.ExecDryRun: "Dry-run",
	}[ex.Kind]
	if verb == "" {
		verb = "Execution"
	}
	took := ""
	if ex.StartedAt != nil && ex.ClosedAt != nil {
		took = " in " + formatDuration(ex.ClosedAt.Sub(*ex.StartedAt))
	}
	var head string
	switch ex.Status {
	case model.ExecCompleted:
		head = pal.green(verb+" completed") + took
	case model.ExecRolledBack:
		head = pal.red(verb+" failed and was rolled back") + took
	case model.ExecCanceled:
		head = pal.yellow(verb+" was canceled") + took
	default:
		head = pal.red(verb+" "+string(ex.Status)) + took
	}
	fmt.Fprintf(w, "%s (execution %s)\n", pal.bold(head), ex.ID)
	if r := ex.Report; r != nil {
		t := newTable(w)
		for _, c := range []struct {
			name string
			n    int
			col  func(string) string
		}{
			{"created", r.Created, pal.green}, {"updated", r.Updated, pal.yellow}, {"deleted", r.Deleted, pal.red},
			{"unchanged", r.Unchanged, pal.dim}, {"failed", r.Failed, pal.red}, {"skipped", r.Skipped, pal.dim},
		} {
			n := fmt.Sprint(c.n)
			if c.n > 0 {
				n = c.col(n)
			}
			t.row("  "+c.name+":", n)
		}
		if r.Refreshed > 0 {
			t.row("  refreshed:", pal.cyan(fmt.Sprint(r.Refreshed))+" (counted above too)")
		}
		if err := t.flush(); err != nil {
			return err
		}
		if len(r.Failures) > 0 {
			fmt.Fprintln(w, "Failures:")
			for _, f := range r.Failures {
				fmt.Fprintf(w, "  %s: %s\n", f.Step, f.Error)
			}
		}
		if len(r.CompensationFailures) > 0 {
			fmt.Fprintln(w, pal.red("Compensations that failed (left as they are):"))
			for _, f := range r.CompensationFailures {
				fmt.Fprintf(w, "  %s: %s\n", f.Step, f.Error)
			}
		}
	}
	if p := ex.Plan; p != nil && ex.Report == nil {
		s := p.Summary
		fmt.Fprintf(w, "Plan: %d to create, %d to update, %d to delete, %d to run, %d unchanged (cairn exec show %s lists the steps)\n",
			s.Create, s.Update, s.Delete, s.Run, s.Noop, ex.ID)
	}
	if ex.Error != "" && ex.Status != model.ExecCompleted {
		fmt.Fprintf(w, "Error: %s\n", ex.Error)
	}
	if ex.UIURL != "" {
		fmt.Fprintf(w, "Temporal UI: %s\n", ex.UIURL)
	}
	return executionOutcome(ex)
}

// executionOutcome is nil for an execution that completed with no failed
// step, else the error that makes the exit code 1.
func executionOutcome(ex *model.Execution) error {
	if ex.Status == model.ExecCompleted && (ex.Report == nil || ex.Report.Failed == 0) {
		return nil
	}
	return &exitError{code: exitFailure}
}

// watch follows an execution with a progress display on w and returns it
// finished.
func (r *remote) watch(ctx context.Context, c *client.Client, w io.Writer, id string) (*model.Execution, error) {
	pal := palette{on: r.out.useColor(w)}
	f := &follower{c: c, progress: newProgress(w, isTerminal(w), pal, id), notes: r.a.stderr, poll: r.poll}
	return f.follow(ctx, id)
}
