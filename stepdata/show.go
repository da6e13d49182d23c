package stepdata

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// Bounds of what reports show of a step's changes: values are cut to
// ShownValue characters in results (PlanValue in a dry-run's plan), at
// most shownChanges changes a step; a step's result spends at most
// StepChangeBudget bytes on them, a batch's at most BatchChangeBudget.
const (
	ShownValue        = 80
	PlanValue         = 1000
	StepChangeBudget  = 8 << 10
	BatchChangeBudget = 1 << 10
	shownChanges      = 20
)

// Show is changes as reports show them: each value redacted of secrets and
// cut to limit characters (see Shorten), at most shownChanges of them and a
// last one counting the rest.
func Show(changes []model.AttrChange, secrets []string, limit int) []model.AttrChange {
	if len(changes) == 0 {
		return nil
	}
	n := min(len(changes), shownChanges)
	out := make([]model.AttrChange, 0, n+1)
	for _, c := range changes[:n] {
		out = append(out, model.AttrChange{Path: c.Path, Old: Shorten(c.Old, secrets, limit), New: Shorten(c.New, secrets, limit)})
	}
	if len(changes) > n {
		out = append(out, model.AttrChange{Path: fmt.Sprintf("(%d more)", len(changes)-n)})
	}
	return out
}

// Shorten renders a changed value for a report: secrets redacted in the
// value itself before it is rendered (rendering escapes them), then in the
// text, then cut to limit characters. Numbers and booleans are kept as
// they are.
func Shorten(v any, secrets []string, limit int) any {
	switch x := expr.RedactValue(v, secrets).(type) {
	case nil:
		return nil
	case bool, int, int64, float64:
		return x
	default:
		return nested.Cut(expr.Redact(nested.Text(x), secrets), limit)
	}
}

// Spend keeps changes while the byte budget lasts (their JSON size taken
// from it), and drops them once it is spent.
func Spend(changes []model.AttrChange, budget *int) []model.AttrChange {
	if len(changes) == 0 || *budget <= 0 {
		return nil
	}
	raw, _ := json.Marshal(changes)
	*budget -= len(raw)
	if *budget < 0 {
		return nil
	}
	return changes
}
