// Package ttlcache is a small cache bounded in entries and in time, for
// values a process may keep a while but must not keep forever (parsed
// packages, an execution's parameters).
package ttlcache

import (
	"sync"
	"time"
)

// Cache keeps at most size values, each for ttl; when full, the oldest
// goes first. It is safe for concurrent use. Cost: Put is O(size) when the
// cache is full (it looks for the oldest entry), so size stays small.
// Its zero value is not usable: see New.
type Cache[V any] struct {
	size    int
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]entry[V]
}

type entry[V any] struct {
	v  V
	at time.Time
}

// New returns a cache of at most size values, each kept for ttl.
func New[V any](size int, ttl time.Duration) *Cache[V] {
	return &Cache[V]{size: size, ttl: ttl, entries: map[string]entry[V]{}}
}

// Get returns the value kept under key, if it has not expired.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Since(e.at) > c.ttl {
		delete(c.entries, key)
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put keeps v under key, dropping the oldest entries beyond the size.
func (c *Cache[V]) Put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.entries) >= c.size {
		oldest := ""
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(c.entries[oldest].at) {
				oldest = k
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[key] = entry[V]{v: v, at: time.Now()}
}

// Len is how many values the cache holds, expired ones included until
// they are looked up or pushed out.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
