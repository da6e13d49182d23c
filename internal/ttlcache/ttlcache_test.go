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
