package dag

// readySet holds the ready vertices of a Scheduler and hands out the least
// one that may start: a vertex under a cap (Builder.Cap) may start only
// while its key runs fewer than its limit.
//
// Every keyed vertex waits in its key's heap; the main heap holds the
// uncapped ready vertices plus, for each key with room, the head of its
// heap. A key's head that lost its place (a better vertex arrived, or the
// key filled up) stays in the main heap and is dropped when it surfaces,
// and a key's new head is offered whenever the head or the room changes.
// Each push, start and finish offers at most one entry, so every operation
// is O(log n) amortized.
type readySet struct {
	less   func(a, b int) bool
	main   vheap
	inMain []bool  // a keyed vertex has an entry in main
	keyOf  []int32 // vertex → key, -1 for none
	keys   []capKey
}

type capKey struct {
	limit, running int
	heap           vheap
}

func newReadySet(less func(a, b int) bool, c capBuilder) readySet {
	r := readySet{less: less, main: vheap{less: less}, keyOf: c.keyOf}
	if len(c.limits) > 0 {
		r.inMain = make([]bool, len(c.keyOf))
		r.keys = make([]capKey, len(c.limits))
		for k, l := range c.limits {
			r.keys[k] = capKey{limit: l, heap: vheap{less: less}}
		}
	}
	return r
}

// push adds a ready vertex.
func (r *readySet) push(v int) {
	k := r.key(v)
	if k < 0 {
		r.main.push(v)
		return
	}
	r.keys[k].heap.push(v)
	r.offer(k)
}

// pop removes and returns the least vertex that may start, counting it as
// running under its key, or reports false.
func (r *readySet) pop() (int, bool) {
	for r.main.len() > 0 {
		v := r.main.pop()
		k := r.key(v)
		if k < 0 {
			return v, true
		}
		r.inMain[v] = false
		key := &r.keys[k]
		if key.running >= key.limit || key.heap.top() != v {
			continue // stale: offered again once it heads a key with room
		}
		key.heap.pop()
		key.running++
		r.offer(k)
		return v, true
	}
	return 0, false
}

// finished returns a vertex's slot to its key.
func (r *readySet) finished(v int) {
	if k := r.key(v); k >= 0 {
		r.keys[k].running--
		r.offer(k)
	}
}

// offer puts key k's head in the main heap if the key has room.
func (r *readySet) offer(k int) {
	key := &r.keys[k]
	if key.running >= key.limit || key.heap.len() == 0 {
		return
	}
	if h := key.heap.top(); !r.inMain[h] {
		r.inMain[h] = true
		r.main.push(h)
	}
}

func (r *readySet) key(v int) int {
	if r.keyOf == nil {
		return -1
	}
	return int(r.keyOf[v])
}

// capBuilder collects the caps of Builder.Cap: keys numbered in the order
// first seen, each with the smallest limit given.
type capBuilder struct {
	keyOf  []int32
	index  map[string]int32
	limits []int
	n      int
}

func newCapBuilder(n int) capBuilder { return capBuilder{n: n} }

func (c *capBuilder) add(v int, key string, limit int) {
	if c.index == nil {
		c.index = map[string]int32{}
		c.keyOf = make([]int32, c.n)
		for i := range c.keyOf {
			c.keyOf[i] = -1
		}
	}
	k, ok := c.index[key]
	if !ok {
		k = int32(len(c.limits))
		c.index[key] = k
		c.limits = append(c.limits, limit)
	}
	c.limits[k] = min(c.limits[k], limit)
	c.keyOf[v] = k
}

// vheap is a binary heap of vertices ordered by less.
type vheap struct {
	v    []int32
	less func(a, b int) bool
}

func (h *vheap) len() int { return len(h.v) }
func (h *vheap) top() int { return int(h.v[0]) }

func (h *vheap) push(v int) {
	h.v = append(h.v, int32(v))
	i := len(h.v) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(int(h.v[i]), int(h.v[p])) {
			break
		}
		h.v[i], h.v[p] = h.v[p], h.v[i]
		i = p
	}
}

func (h *vheap) pop() int {
	top := h.v[0]
	last := len(h.v) - 1
	h.v[0] = h.v[last]
	h.v = h.v[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h.less(int(h.v[r]), int(h.v[l])) {
			m = r
		}
		if !h.less(int(h.v[m]), int(h.v[i])) {
			break
		}
		h.v[i], h.v[m] = h.v[m], h.v[i]
		i = m
	}
	return int(top)
}
