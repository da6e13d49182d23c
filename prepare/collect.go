package prepare

import "runtime"

// largeSteps is the size (resources or steps) from which a package's
// loading and planning, and a graph execution's preparation, collect
// garbage at their own phase boundaries: fuel-library's release graph on
// 400 nodes has about 20,000 steps.
const largeSteps = 20_000

// collect runs the garbage collector when n, the resources or steps at
// hand, make a large package. The collector otherwise lets the heap grow
// to twice what was live at its last run: while a package of 100,000
// resources is decoded part by part and then written unit by unit, that
// is twice the high point of what is live plus each part's (or chunk's)
// garbage. Collecting at the boundaries keeps the heap near what is live
// plus one part's garbage (about 100 MB less at 100,000 resources), for a
// collection of the live heap each time (some 50 ms at that size, a few
// tenths of a second in all). A graph execution prepared on 1,000 nodes
// (48,652 steps) decodes its expanded steps, evaluates its nodes'
// expressions and encodes its plan in turn, each leaving tens of MB of
// garbage the next would otherwise pile onto.
func collect(n int) {
	if n > largeSteps {
		runtime.GC()
	}
}
