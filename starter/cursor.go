package starter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadCursor refuses a cursor this starter did not give.
var ErrBadCursor = errors.New("bad cursor")

// A cursor is where a follower of an execution stands: the change version
// (see workflows.ProgressSince) it has read up to, one per shard of a
// sharded execution. Clients treat its text as opaque: "v" and the
// version, or "s" and the shards' versions joined by dots ("s812.40.0").
// The empty cursor stands before every change.
type cursor struct {
	sharded  bool
	versions []int64
}

// maxCursorLen bounds a cursor's text: about 4,000 shards of 16-digit
// versions.
const maxCursorLen = 64 << 10

func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	if len(s) > maxCursorLen {
		return cursor{}, fmt.Errorf("%w: longer than %d bytes", ErrBadCursor, maxCursorLen)
	}
	var c cursor
	switch s[0] {
	case 'v':
	case 's':
		c.sharded = true
	default:
		return cursor{}, fmt.Errorf("%w %q: not one this server gave", ErrBadCursor, clip(s))
	}
	for _, part := range strings.Split(s[1:], ".") {
		v, err := strconv.ParseInt(part, 10, 64)
		if err != nil || v < 0 {
			return cursor{}, fmt.Errorf("%w %q: not one this server gave", ErrBadCursor, clip(s))
		}
		c.versions = append(c.versions, v)
	}
	if !c.sharded && len(c.versions) != 1 {
		return cursor{}, fmt.Errorf("%w %q: not one this server gave", ErrBadCursor, clip(s))
	}
	return c, nil
}

func (c cursor) String() string {
	var b strings.Builder
	if c.sharded {
		b.WriteByte('s')
	} else {
		b.WriteByte('v')
	}
	for k, v := range c.versions {
		if k > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	if len(c.versions) == 0 {
		b.WriteByte('0')
	}
	return b.String()
}

// at is the version of shard k (of the execution, when not sharded).
func (c cursor) at(k int) int64 {
	if k < len(c.versions) {
		return c.versions[k]
	}
	return 0
}

// clip shortens a cursor quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
