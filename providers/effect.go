package providers

import "github.com/cairn-io/cairn/model"

// RepeatUnsafe reports whether req's change, once started, must not be
// made again by an attempt that cannot tell whether the first one
// finished: its kind is an Effect that says so for req's spec, and the
// step has no test_pre (a Fuel task's check, run before the change, is a
// guard too). Cost: a map lookup.
func (r *Registry) RepeatUnsafe(req Request) bool {
	if req.TestPre != nil || req.Delete {
		return false
	}
	p, ok := r.Get(req.Kind)
	if !ok {
		return false
	}
	e, ok := p.(Effect)
	return ok && e.RepeatUnsafe(req.Spec)
}

// RepeatUnsafe: an exec without a guard runs whenever it is applied; with
// creates, unless or onlyif, the guard is read again first and decides.
func (execProvider) RepeatUnsafe(want model.Spec) bool {
	for _, k := range []string{"creates", "unless", "onlyif"} {
		if want[k] != nil {
			return false
		}
	}
	return true
}

// RepeatUnsafe: a provisioning hook's command has no guard.
func (hookProvider) RepeatUnsafe(model.Spec) bool { return true }
