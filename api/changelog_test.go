package api

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads l from pos, max events at a time, and returns each key's
// data as read last, the number of events read and the final position.
func readAll(l *changeLog, pos uint64, max int) (map[string]string, int, uint64) {
	got := map[string]string{}
	n := 0
	for {
		batch, next := l.after(pos, max, nil)
		for _, ev := range batch {
			var key, val string
			_, _ = fmt.Sscanf(string(ev.data), "%s %s", &key, &val)
			got[key] = val
		}
		n += len(batch)
		pos = next
		if len(batch) < max {
			return got, n, pos
		}
	}
}

func TestChangeLog(t *testing.T) {
	tests := []struct {
		name    string
		keys    int
		rounds  int
		readAt  int // round after which the early reader reads (-1: never)
		max     int
		wantAll int // events a reader from 0 reads at the end
	}{
		{"one round", 10, 1, -1, 3, 10},
		{"many rounds coalesce", 10, 1000, -1, 7, 10},
		{"a reader in the middle reads what changed after", 50, 20, 10, 16, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newChangeLog()
			var mid uint64
			midRead := map[string]string{}
			for r := range tt.rounds {
				for k := range tt.keys {
					require.True(t, l.put(fmt.Sprint("k", k), "step", fmt.Appendf(nil, "k%d r%d", k, r), true))
				}
				if r == tt.readAt {
					midRead, _, mid = readAll(l, 0, tt.max)
				}
			}
			keys, slots, _ := l.size()
			assert.Equal(t, tt.keys, keys)
			assert.LessOrEqual(t, slots, 2*tt.keys+1024, "slots stay bounded")

			got, n, pos := readAll(l, 0, tt.max)
			assert.Equal(t, tt.wantAll, n, "each key once")
			assert.Equal(t, l.head, pos)
			for k := range tt.keys {
				assert.Equal(t, fmt.Sprint("r", tt.rounds-1), got[fmt.Sprint("k", k)], "key %d at its latest", k)
			}
			if tt.readAt >= 0 {
				assert.Len(t, midRead, tt.keys)
				later, n, _ := readAll(l, mid, tt.max)
				assert.Equal(t, tt.keys, n, "every key changed after the middle read, once each")
				assert.Equal(t, got, later)
			}
			rest, n, _ := readAll(l, pos, tt.max)
			assert.Zero(t, n)
			assert.Empty(t, rest)
		})
	}
}

func TestChangeLogPutsOnlyChanges(t *testing.T) {
	l := newChangeLog()
	require.True(t, l.put("a", "step", []byte("a 1"), true))
	head := l.head
	assert.False(t, l.put("a", "step", []byte("a 1"), true), "the same event again")
	assert.Equal(t, head, l.head)

	// Replaced in place: a reader past it is not told, a new one reads it.
	require.True(t, l.put("a", "step", []byte("a 2"), false))
	assert.Equal(t, head, l.head)
	batch, _ := l.after(head, 10, nil)
	assert.Empty(t, batch)
	got, _, _ := readAll(l, 0, 10)
	assert.Equal(t, "2", got["a"])
	_, _, size := l.size()
	assert.Equal(t, len("a 2"), size)
}
