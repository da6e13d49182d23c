package stepdata

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
)

// EncodeBefore is the before-state record of a change as stored: whole
// when it fits in limit bytes; else without the state's content (only
// whether the object existed and its id), unkept then being the size left
// out, and the step has no byte-exact rollback (see NoRollbackNote).
func EncodeBefore(ch providers.Change, limit int) (raw []byte, unkept int, err error) {
	rec := Before{Action: ch.Action, Irreversible: ch.Irreversible, Before: ch.Before}
	if raw, err = json.Marshal(rec); err != nil || len(raw) <= limit {
		return raw, 0, err
	}
	rec.Before = providers.State{Exists: ch.Before.Exists, ID: ch.Before.ID}
	rec.Unkept = len(raw)
	raw, err = json.Marshal(rec)
	return raw, rec.Unkept, err
}

// PlanNote is what a dry-run says of a planned change whose before-state
// an apply would not keep under limit: one that changes or removes an
// existing object whose state is over the limit. "" for every other
// change.
func PlanNote(ch providers.Change, limit int) string {
	if !ch.Before.Exists || ch.Action == model.ActionNoop || ch.Action == model.ActionCreate || ch.Action == "" {
		return ""
	}
	raw, err := json.Marshal(Before{Action: ch.Action, Irreversible: ch.Irreversible, Before: ch.Before})
	if err != nil || len(raw) <= limit {
		return ""
	}
	return NoRollbackNote(len(raw), limit)
}

// NoRollbackNote says that a step's previous state, size bytes, is not
// kept under limit.
func NoRollbackNote(size, limit int) string {
	return fmt.Sprintf("no byte-exact rollback: the state before the change (%s) is over the before-state limit (%s) and is not kept",
		sizeString(size), sizeString(limit))
}

// UnkeptError is the compensation failure of a step whose before-state
// was not kept: what cannot be done, and what a person can do instead.
func UnkeptError(before Before) string {
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
