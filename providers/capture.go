package providers

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Default bounds of what a command's stdout and stderr keep: the first
// outputHead bytes and the last outputTail bytes of each stream. A command
// may print without limit; what lies between is counted and dropped, so
// memory stays bounded whatever it prints.
const (
	// outputHead is how many bytes of a stream's beginning are kept.
	outputHead = 64 << 10
	// outputTail is how many bytes of a stream's end are kept.
	outputTail = 64 << 10
)

// streamLimit bounds one captured stream: Head bytes of its beginning and
// Tail bytes of its end. The zero value means the defaults (outputHead,
// outputTail).
type streamLimit struct {
	Head, Tail int
}

func (l streamLimit) orDefault() streamLimit {
	if l.Head <= 0 && l.Tail <= 0 {
		return streamLimit{Head: outputHead, Tail: outputTail}
	}
	return streamLimit{Head: max(l.Head, 0), Tail: max(l.Tail, 0)}
}

// outputCut says where a captured stream was cut and how much of it was
// dropped: the kept bytes are the head up to At, then the tail.
type outputCut struct {
	At      int
	Dropped int64
	// Limit is the stream's bound, for the notice (zero: the defaults).
	Limit streamLimit `json:"-"`
}

// capture is an io.Writer that keeps the head and the tail of what is
// written to it (a ring buffer of the last Tail bytes) and counts the
// rest. Its memory never exceeds Head+Tail bytes.
type capture struct {
	limit streamLimit
	head  []byte
	ring  []byte // the tail; once full, its oldest byte is at pos
	pos   int
	total int64
}

func newCapture(l streamLimit) *capture { return &capture{limit: l.orDefault()} }

// Write keeps what fits in the head, then the latest bytes in the tail.
// It never fails.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.limit.Head - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tail := c.limit.Tail
	if tail == 0 || len(p) == 0 {
		return n, nil
	}
	if len(p) >= tail {
		c.ring = append(c.ring[:0], p[len(p)-tail:]...)
		c.pos = 0
		return n, nil
	}
	if len(c.ring) < tail {
		k := min(tail-len(c.ring), len(p))
		c.ring = append(c.ring, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(c.ring[c.pos:], p)
		p = p[k:]
		c.pos = (c.pos + k) % tail
	}
	return n, nil
}

// result is the kept bytes (head, then tail in order) and where the
// middle was cut.
func (c *capture) result() ([]byte, outputCut) {
	out := make([]byte, 0, len(c.head)+len(c.ring))
	out = append(out, c.head...)
	out = append(out, c.ring[c.pos:]...)
	out = append(out, c.ring[:c.pos]...)
	return out, outputCut{At: len(c.head), Dropped: c.total - int64(len(out)), Limit: c.limit}
}

// notice is the line that stands for the dropped middle, naming the
// stream's own bounds.
func (c outputCut) notice() string {
	l := c.Limit.orDefault()
	return fmt.Sprintf("[… %d bytes cut: only the first %d and the last %d bytes are kept …]", c.Dropped, l.Head, l.Tail)
}

// outputText renders a captured stream as valid UTF-8: its whole text, or
// its head and tail with a notice of how many bytes were cut between them.
func outputText(b []byte, cut outputCut) string {
	if cut.Dropped <= 0 {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	head, tail := b[:cut.At], b[cut.At:]
	// The cut may split a character: drop its pieces on both sides.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.FullRune(head[lastRuneStart(head):]); i++ {
		head = head[:lastRuneStart(head)]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return strings.ToValidUTF8(string(head), "\uFFFD") + "\n" + cut.notice() + "\n" + strings.ToValidUTF8(string(tail), "\uFFFD")
}

// lastRuneStart is the index of the byte where b's last character begins.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b) - 1
}
