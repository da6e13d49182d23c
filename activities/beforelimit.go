package activities

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// beforeBytes is the before-state record of r as stored: whole when it
// fits in the limit; else without the state's content (only whether the
// object existed and its id, with the size left out), and r's result
// says the step has no byte-exact rollback.
func (a *Activities) beforeBytes(r *stepRun) ([]byte, error) {
	rec := beforeRecord{Action: r.plan.Action, Irreversible: r.plan.Irreversible, Before: r.plan.Before}
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	if len(raw) <= a.d.BeforeStateLimit {
		return raw, nil
	}
	rec.Before = providers.State{Exists: r.plan.Before.Exists, ID: r.plan.Before.ID}
	rec.Unkept = len(raw)
	r.res.Note = noRollbackNote(rec.Unkept, a.d.BeforeStateLimit)
	a.log.Warn("before-state over the limit not kept", "step", r.step.ID, "bytes", rec.Unkept, "limit", a.d.BeforeStateLimit)
	return json.Marshal(rec)
}

// planNote is what a dry-run says of a step whose before-state an apply
// would not keep: one that changes or removes an existing object whose
// state is over the limit. "" for every other step.
func (a *Activities) planNote(r *stepRun) string {
	if !r.plan.Before.Exists || r.plan.Action == model.ActionNoop || r.plan.Action == model.ActionCreate || r.plan.Action == "" {
		return ""
	}
	raw, err := json.Marshal(beforeRecord{Action: r.plan.Action, Irreversible: r.plan.Irreversible, Before: r.plan.Before})
	if err != nil || len(raw) <= a.d.BeforeStateLimit {
		return ""
	}
	return noRollbackNote(len(raw), a.d.BeforeStateLimit)
}

// noRollbackNote says that a step's previous state is not kept.
func noRollbackNote(size, limit int) string {
	return fmt.Sprintf("no byte-exact rollback: the state before the change (%s) is over the before-state limit (%s) and is not kept",
		sizeString(size), sizeString(limit))
}

// unkeptError is the compensation failure of a step whose before-state
// was not kept: what cannot be done, and what a person can do instead.
func unkeptError(before beforeRecord) string {
	what := before.Before.ID
	if what == "" {
		what = "the object"
	}
	return fmt.Sprintf("cannot restore the state before the change: it was %s, over the before-state limit, and was not kept; "+
		"restore %s from a backup (a larger CAIRN_BEFORE_STATE_LIMIT keeps such states)", sizeString(before.Unkept), what)
}

// sizeString is n bytes for people: "512 B", "3.5 KiB", "12.0 MiB".
func sizeString(n int) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
