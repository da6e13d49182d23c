package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/cairn-io/cairn/model"
)

// Parsed snapshots are kept a while: a plan is usually followed by the
// apply of the same package, and an apply by the next one, which reads the
// previous snapshot again. Only packages up to cacheMaxSteps are kept, at
// most cacheEntries of them, for cacheTTL.
const (
	cacheEntries  = 4
	cacheMaxSteps = 50000
	cacheTTL      = 10 * time.Minute
)

// An agent keeps the parameters of at most paramsCacheEntries executions,
// each for paramsCacheTTL: the units of one execution on its node read
// them once, and secrets do not stay in its memory longer than that.
const (
	paramsCacheEntries = 16
	paramsCacheTTL     = 10 * time.Minute
)

// ttlCache keeps at most size values, each for ttl; the oldest goes first.
// Its zero value is not usable: see newTTLCache.
type ttlCache[V any] struct {
	size    int
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v  V
	at time.Time
}

func newTTLCache[V any](size int, ttl time.Duration) *ttlCache[V] {
	return &ttlCache[V]{size: size, ttl: ttl, entries: map[string]ttlEntry[V]{}}
}

// get returns the value kept under key, if it has not expired.
func (c *ttlCache[V]) get(key string) (V, bool) {
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

// put keeps v under key, dropping the oldest entries beyond the size.
func (c *ttlCache[V]) put(key string, v V) {
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
	c.entries[key] = ttlEntry[V]{v: v, at: time.Now()}
}

// snapshotCache holds parsed packages by snapshot hash and nodes. Cached
// packages are shared and must not be modified.
type snapshotCache struct{ c *ttlCache[*LoadedPackage] }

func newSnapshotCache() snapshotCache {
	return snapshotCache{c: newTTLCache[*LoadedPackage](cacheEntries, cacheTTL)}
}

func cacheKey(hash string, nodes []model.Node) string {
	raw, _ := json.Marshal(nodes)
	sum := sha256.Sum256(raw)
	return hash + "/" + hex.EncodeToString(sum[:8])
}

func (c snapshotCache) get(key string) *LoadedPackage {
	pkg, _ := c.c.get(key)
	return pkg
}

func (c snapshotCache) put(key string, pkg *LoadedPackage) {
	if len(pkg.Steps) > cacheMaxSteps {
		return
	}
	c.c.put(key, pkg)
}
