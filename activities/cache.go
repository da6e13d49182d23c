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

// snapshotCache holds parsed packages by snapshot hash and nodes. Cached
// packages are shared and must not be modified.
type snapshotCache struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	pkg *LoadedPackage
	at  time.Time
}

func cacheKey(hash string, nodes []model.Node) string {
	raw, _ := json.Marshal(nodes)
	sum := sha256.Sum256(raw)
	return hash + "/" + hex.EncodeToString(sum[:8])
}

func (c *snapshotCache) get(key string) *LoadedPackage {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Since(e.at) > cacheTTL {
		delete(c.entries, key)
		return nil
	}
	return e.pkg
}

func (c *snapshotCache) put(key string, pkg *LoadedPackage) {
	if len(pkg.Steps) > cacheMaxSteps {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cacheEntry{}
	}
	for len(c.entries) >= cacheEntries {
		oldest := ""
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(c.entries[oldest].at) {
				oldest = k
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[key] = cacheEntry{pkg: pkg, at: time.Now()}
}
