package api

import (
	"bytes"
	"sort"
)

// changeLog is what one followed execution's event streams read: the
// latest event of each key (each step, and the execution's status), in
// the order they last changed. Every change takes the next sequence
// number; a reader keeps the number it has read up to and asks for what
// came after, so readers share one copy of the state and a reader that
// falls behind skips the states it missed: it reads each key's latest
// event once, whatever happened meanwhile.
//
// Memory: one entry per key (its event's bytes) and at most about two
// slots a key (a changed key leaves a stale slot behind until the log is
// compacted), whatever the number of changes or readers. Not safe for
// concurrent use: its follower guards it.
type changeLog struct {
	byKey map[string]*logEntry
	slots []slot // in sequence order; a slot whose seq is no longer its entry's is stale
	head  uint64 // the last sequence number given
	bytes int    // the entries' event bytes
}

type logEntry struct {
	name string // event name
	data []byte // event data (JSON)
	seq  uint64
}

type slot struct {
	e   *logEntry
	seq uint64
}

// logEvent is one event as a reader takes it: its own copy of the
// entry's name, data (never written to after) and sequence number.
type logEvent struct {
	name string
	data []byte
	seq  uint64
}

func newChangeLog() *changeLog {
	return &changeLog{byKey: map[string]*logEntry{}}
}

// put makes data the latest event of key and reports whether it changed.
// With bump false a changed event replaces the entry's data in place, for
// readers who have not read it yet, without telling those who have.
func (l *changeLog) put(key, name string, data []byte, bump bool) bool {
	e := l.byKey[key]
	if e != nil && e.name == name && bytes.Equal(e.data, data) {
		return false
	}
	if e == nil {
		e = &logEntry{}
		l.byKey[key] = e
		bump = true
	}
	l.bytes += len(data) - len(e.data)
	e.name, e.data = name, data
	if !bump {
		return true
	}
	l.head++
	e.seq = l.head
	l.slots = append(l.slots, slot{e: e, seq: l.head})
	if len(l.slots) > 2*len(l.byKey)+1024 {
		l.compact()
	}
	return true
}

// compact drops the stale slots.
func (l *changeLog) compact() {
	live := l.slots[:0]
	for _, s := range l.slots {
		if s.e.seq == s.seq {
			live = append(live, s)
		}
	}
	clear(l.slots[len(live):])
	l.slots = live
}

// after appends to out, oldest first, the latest events of the keys that
// changed after sequence number pos, at most max of them, and returns
// them with the position the reader is at once it has them: the last
// one's number, or the head when it has everything.
func (l *changeLog) after(pos uint64, max int, out []logEvent) ([]logEvent, uint64) {
	k := sort.Search(len(l.slots), func(k int) bool { return l.slots[k].seq > pos })
	for ; k < len(l.slots); k++ {
		s := l.slots[k]
		if s.e.seq != s.seq {
			continue // changed again later
		}
		if len(out) == max {
			return out, out[len(out)-1].seq
		}
		out = append(out, logEvent{name: s.e.name, data: s.e.data, seq: s.seq})
	}
	return out, l.head
}

// size is the number of keys, slots and event bytes held.
func (l *changeLog) size() (keys, slots, bytes int) {
	return len(l.byKey), len(l.slots), l.bytes
}
