package providers

import (
	"github.com/cairn-io/cairn/model"
)

// UndoNoter is implemented by kinds whose undo puts back less than the
// change took, or only on a condition: a package's undo reinstalls a
// version only while the sources offer it. The note is shown in the plan
// and the result as the change "undo", so that what a rollback cannot
// restore is said before the change is made.
type UndoNoter interface {
	// UndoNote says, in a few words, what undoing action (planned from
	// want over have) will and will not restore; "" when it restores all.
	UndoNote(want model.Spec, have State, action model.Action) string
}

// undoNotePath is the change that carries an UndoNoter's note.
const undoNotePath = "undo"

// undoNote is p's note on undoing action, as a change, or nothing.
func undoNote(p Provider, want model.Spec, have State, action model.Action) []model.AttrChange {
	n, ok := p.(UndoNoter)
	if !ok {
		return nil
	}
	if note := n.UndoNote(want, have, action); note != "" {
		return []model.AttrChange{{Path: undoNotePath, New: note}}
	}
	return nil
}
