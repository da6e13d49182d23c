package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/store"
)

// Bounds of the grant cache: how many grants it keeps, and the largest
// grant (in step ids) it keeps at all.
const (
	grantCacheEntries = 32
	grantCacheMaxIDs  = 50000
)

// grantSet is a contract.NodeGrant as sets.
type grantSet struct {
	steps, units, deps map[string]bool
	// env and secrets are the parameters the node's steps read by name.
	env, secrets map[string]bool
}

func newGrantSet(g *contract.NodeGrant) *grantSet {
	set := func(ids []string) map[string]bool {
		m := make(map[string]bool, len(ids))
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	return &grantSet{steps: set(g.Steps), units: set(g.Units), deps: set(g.Deps), env: set(g.EnvRefs), secrets: set(g.Secrets)}
}

func (g *grantSet) size() int {
	return len(g.steps) + len(g.units) + len(g.deps) + len(g.env) + len(g.secrets)
}

// errNoGrant: the execution gives the node nothing.
var errNoGrant = errors.New("no grant")

// grantCache keeps the grants agents use: each unit's activity asks for
// several records, and a grant does not change once its execution is
// prepared. Bounded in entries and in the size of what it keeps.
type grantCache struct {
	mu      sync.Mutex
	entries map[string]*grantSet
	order   []string
}

// get returns the grant of node (cluster, node) in execution execID, or
// errNoGrant when there is none for that cluster and node.
func (c *grantCache) get(ctx context.Context, st store.Store, execID, cluster, node string) (*grantSet, error) {
	key := execID + "\x00" + cluster + "\x00" + node
	c.mu.Lock()
	g, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return g, nil
	}
	raw, err := st.GetStepData(ctx, execID, node, contract.DataNodeGrant)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoGrant
	}
	if err != nil {
		return nil, err
	}
	var grant contract.NodeGrant
	if err := json.Unmarshal(raw, &grant); err != nil {
		return nil, fmt.Errorf("grant of node %s in %s: %w", node, execID, err)
	}
	if grant.Cluster != cluster || grant.Node != node {
		return nil, errNoGrant
	}
	g = newGrantSet(&grant)
	if g.size() > grantCacheMaxIDs {
		return g, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*grantSet{}
	}
	if _, ok := c.entries[key]; !ok {
		c.entries[key] = g
		c.order = append(c.order, key)
		for len(c.order) > grantCacheEntries {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	return g, nil
}
