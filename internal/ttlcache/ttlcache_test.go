package ttlcache

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The cache keeps at most its size, dropping the oldest, and nothing past
// its time.
func TestCacheBounds(t *testing.T) {
	const size = 16
	c := New[int](size, 10*time.Minute)
	for i := range size + 4 {
		c.Put(fmt.Sprint(i), i)
	}
	assert.Equal(t, size, c.Len())
	_, ok := c.Get("0")
	assert.False(t, ok, "the oldest went first")
	v, ok := c.Get(fmt.Sprint(size + 3))
	assert.True(t, ok)
	assert.Equal(t, size+3, v)

	expired := New[int](2, 0)
	expired.Put("k", 1)
	_, ok = expired.Get("k")
	assert.False(t, ok, "nothing is kept past its time")
}

// Replacing a key keeps the others; Delete and Clear drop values.
func TestCacheReplaceDeleteClear(t *testing.T) {
	c := New[int](2, time.Minute)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("a", 3) // a full cache replacing a key drops nothing else
	v, ok := c.Get("b")
	assert.True(t, ok)
	assert.Equal(t, 2, v)
	v, _ = c.Get("a")
	assert.Equal(t, 3, v)
	c.Put("c", 4) // b is now the oldest put
	_, ok = c.Get("b")
	assert.False(t, ok, "the oldest put went first")
	c.Delete("a", "missing")
	_, ok = c.Get("a")
	assert.False(t, ok)
	c.Clear()
	assert.Zero(t, c.Len())
	_, ok = c.Get("c")
	assert.False(t, ok)
}
