package yaql

// Fuel's change functions, as nailgun's yaql extensions define them. Each
// takes an expression, evaluated with `$` bound to the node's current
// deployment data (new) and to the data of its last successful run (old):
//
//	changed(e)        e differs between old and new; true with no old run
//	changedAny(e, …)  any of them changed
//	changedAll(e, …)  all of them changed
//	new(e)            e over the new data
//	old(e)            e over the old data; null when it cannot be read, {}
//	                  for `$` with no old run
//	added(e)          what e holds now and did not before: the keys of a
//	                  dict (with their values), the items of a list; all
//	                  of e with no old run
//	deleted(e)        what e held before and does not now; empty with no
//	                  old run

// undefined marks an old value that could not be read.
type undefinedT struct{}

var undefined = undefinedT{}

func (ev *evaluator) newValue(n Node) (any, error) { return ev.eval(n, ev.in.New) }

// oldValue evaluates n over the old data; an error reading it (the old data
// lacks a part the expression walks through) makes it undefined.
func (ev *evaluator) oldValue(n Node) (any, error) {
	old := ev.in.Old
	if !ev.in.HasOld || old == nil {
		old = map[string]any{}
	}
	v, err := ev.eval(n, old)
	if err != nil {
		if isLimit(err) {
			return nil, err
		}
		return undefined, nil
	}
	return v, nil
}

func (ev *evaluator) changed(n Node) (bool, error) {
	if !ev.in.HasOld {
		if err := ev.step(n); err != nil {
			return false, err
		}
		return true, nil
	}
	nv, err := ev.newValue(n)
	if err != nil {
		return false, err
	}
	ov, err := ev.oldValue(n)
	if err != nil {
		return false, err
	}
	if ov == undefined {
		return true, nil
	}
	return !ev.equal(nv, ov), nil
}

func fnChanged(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	return ev.changed(c.Args[0])
}

// fnChangedAny evaluates every argument (as nailgun does), then answers.
func fnChangedAny(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	anyChanged := false
	for _, n := range c.Args {
		ch, err := ev.changed(n)
		if err != nil {
			return nil, err
		}
		anyChanged = anyChanged || ch
	}
	return anyChanged, nil
}

func fnChangedAll(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	all := true
	for _, n := range c.Args {
		ch, err := ev.changed(n)
		if err != nil {
			return nil, err
		}
		all = all && ch
	}
	return all, nil
}

func fnNew(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	return ev.newValue(c.Args[0])
}

func fnOld(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	v, err := ev.oldValue(c.Args[0])
	if v == undefined {
		return nil, err
	}
	return v, err
}

// newAndOld is arg's value now (newValue) and in the previous run
// (oldValue).
func (ev *evaluator) newAndOld(arg Node) (nv, ov any, err error) {
	if nv, err = ev.newValue(arg); err != nil {
		return nil, nil, err
	}
	if ov, err = ev.oldValue(arg); err != nil {
		return nil, nil, err
	}
	return nv, ov, nil
}

func fnAdded(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	nv, ov, err := ev.newAndOld(c.Args[0])
	if err != nil {
		return nil, err
	}
	return ev.memoDifference(c, nv, ov)
}

func fnDeleted(ev *evaluator, c *Call, _ any, _ []any) (any, error) {
	nv, ov, err := ev.newAndOld(c.Args[0])
	if err != nil {
		return nil, err
	}
	if ov == undefined || ov == nil {
		switch nv.(type) {
		case map[string]any:
			return map[string]any{}, nil
		case []any:
			return []any{}, nil
		}
		return nil, ev.typeErr(c, "a list or a dict", nv)
	}
	return ev.memoDifference(c, ov, nv)
}

// memoDifference is difference through the memo (see Memo).
func (ev *evaluator) memoDifference(c *Call, a, b any) (any, error) {
	if ev.memo != nil {
		if k, worth := memoKeyOf(c, opDiff, a, b); worth {
			return ev.remember(k, []any{a, b}, func() (any, error) { return ev.difference(c, a, b) })
		}
	}
	return ev.difference(c, a, b)
}

// difference is what a holds that b does not: keys of a dict, items of a
// list. With b undefined or null it is all of a (for added).
func (ev *evaluator) difference(c *Call, a, b any) (any, error) {
	switch x := a.(type) {
	case map[string]any:
		out := map[string]any{}
		y, _ := b.(map[string]any)
		for k, v := range x {
			if err := ev.step(c); err != nil {
				return nil, err
			}
			if _, found := y[k]; !found {
				out[k] = v
			}
		}
		return out, nil
	case []any:
		y, _ := b.([]any)
		out := []any{}
		for _, e := range x {
			if err := ev.step(c); err != nil {
				return nil, err
			}
			if !contains(y, e) {
				out = append(out, e)
			}
		}
		return out, nil
	}
	return nil, ev.typeErr(c, "a list or a dict", a)
}
