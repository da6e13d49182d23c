// Package ttlcache is a small cache bounded in entries and in time, for
// values a process may keep a while but must not keep forever (parsed
// packages, an execution's parameters, token records, executions' owners).
package ttlcache

import (
	"container/list"
	"sync"
	"time"
)

// Cache keeps at most size values, each for ttl; when full, the oldest
// put goes first. It is safe for concurrent use. Cost: Get, Put and
// Delete are O(1) (a map and a list in the order of puts).
// Its zero value is not usable: see New.
type Cache[V any] struct {
	size    int
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]*list.Element
	order   *list.List // of *entry[V], oldest put first
}

type entry[V any] struct {
	key string
	v   V
	at  time.Time
}

// New returns a cache of at most size values, each kept for ttl.
func New[V any](size int, ttl time.Duration) *Cache[V] {
	return &Cache[V]{size: size, ttl: ttl, entries: map[string]*list.Element{}, order: list.New()}
}

// Get returns the value kept under key, if it has not expired.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*entry[V])
	if time.Since(e.at) > c.ttl {
		c.remove(el)
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put keeps v under key (replacing what it held, which then counts as
// put now), dropping the oldest entries beyond the size.
func (c *Cache[V]) Put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	for c.order.Len() >= c.size && c.order.Len() > 0 {
		c.remove(c.order.Front())
	}
	c.entries[key] = c.order.PushBack(&entry[V]{key: key, v: v, at: time.Now()})
}

// Delete drops the values kept under keys.
func (c *Cache[V]) Delete(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if el, ok := c.entries[k]; ok {
			c.remove(el)
		}
	}
}

// Clear drops every value.
func (c *Cache[V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.order.Init()
}

// Len is how many values the cache holds, expired ones included until
// they are looked up or pushed out.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *Cache[V]) remove(el *list.Element) {
	delete(c.entries, el.Value.(*entry[V]).key)
	c.order.Remove(el)
}
