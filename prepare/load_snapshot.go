package prepare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-io/cairn/internal/ttlcache"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
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

// SnapshotReader reads stored snapshots by hash (store.Store has it).
type SnapshotReader interface {
	GetSnapshot(ctx context.Context, hash string) (*model.Snapshot, error)
}

// Snapshots loads package snapshots from the store onto nodes, keeping the
// last few parsed packages (by snapshot hash and nodes) so a plan and the
// apply after it parse a package once. Cached packages are shared and
// must not be modified. It is safe for concurrent use.
type Snapshots struct {
	store  SnapshotReader
	loader PackageLoader
	cache  *ttlcache.Cache[*LoadedPackage]
}

// NewSnapshots returns the loader of the snapshots st holds, parsed by l
// (nil: this process cannot load packages, and Load says so).
func NewSnapshots(st SnapshotReader, l PackageLoader) *Snapshots {
	return &Snapshots{store: st, loader: l, cache: ttlcache.New[*LoadedPackage](cacheEntries, cacheTTL)}
}

// Load returns the package of the snapshot hash names, with its steps
// built onto nodes. A missing hash, a snapshot that is not there or not a
// package, and a package that does not load are a PackageError; a store
// failure is returned as it is. Cost: one store read and a parse, unless
// cached.
func (s *Snapshots) Load(ctx context.Context, hash string, nodes []model.Node) (*LoadedPackage, error) {
	if s.loader == nil {
		return nil, packageError("this worker cannot prepare packages (no package loader)")
	}
	if hash == "" {
		return nil, packageError("no package snapshot given")
	}
	key := cacheKey(hash, nodes)
	if pkg, ok := s.cache.Get(key); ok {
		return pkg, nil
	}
	snap, err := s.store.GetSnapshot(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, packageError(fmt.Sprintf("package snapshot %s not found", ShortHash(hash)))
	}
	if err != nil {
		return nil, err
	}
	if snap.Kind != PackageSnapshotKind {
		return nil, packageError(fmt.Sprintf("snapshot %s is a %q snapshot, not a package", ShortHash(hash), snap.Kind))
	}
	pkg, err := s.loader.Load(ctx, snap.Content, s.store, nodes)
	if err != nil {
		return nil, packageError(fmt.Sprintf("package snapshot %s: %v", ShortHash(hash), err))
	}
	if len(pkg.Steps) <= cacheMaxSteps {
		pkg.shared = true
		s.cache.Put(key, pkg)
	}
	return pkg, nil
}

// cacheKey names a snapshot's package built onto nodes.
func cacheKey(hash string, nodes []model.Node) string {
	raw, _ := json.Marshal(nodes)
	sum := sha256.Sum256(raw)
	return hash + "/" + hex.EncodeToString(sum[:8])
}

// ShortHash is the first 12 characters of a snapshot hash, for messages.
func ShortHash(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
