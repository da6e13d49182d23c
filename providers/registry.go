package providers

import (
	"strings"
	"sync"

	"github.com/cairn-io/cairn/kinds"
)

// Registry holds the providers by kind and runs them through the generic
// engine (Converge, Compensate, List). It is safe for concurrent use.
type Registry struct {
	cat *kinds.Catalogue
	// fingerprintKey keys the fingerprints of content holding secrets.
	fingerprintKey []byte

	mu        sync.RWMutex
	providers map[string]Provider
}

// NewRegistry returns an empty registry. cat classifies attributes for the
// diff and maps derived kinds and Fuel task types onto the built-in kind
// that implements them; nil leaves each provider's own declarations
// (AttrDeclarer) and plain properties. Its fingerprint key is random until
// WithFingerprintKey gives one.
func NewRegistry(cat *kinds.Catalogue) *Registry {
	return &Registry{cat: cat, providers: map[string]Provider{}, fingerprintKey: newFingerprintKey()}
}

// WithFingerprintKey sets the key of the keyed fingerprints of content
// that holds a secret (HMAC-SHA256), and returns r. Every worker of an
// installation should hold the same key (derived from the codec key), so
// that plans made on one show the same fingerprints as on another; with
// the random key of NewRegistry fingerprints agree only within a process.
// A key shorter than 16 bytes is ignored. Call it before r is used.
func (r *Registry) WithFingerprintKey(key []byte) *Registry {
	if len(key) >= 16 {
		r.fingerprintKey = append([]byte(nil), key...)
	}
	return r
}

// Register adds p under its kind, replacing any provider of the same kind.
func (r *Registry) Register(p Provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.providers[strings.ToLower(p.Kind())] = p
}

// Get finds the provider of kind, case-insensitively. A derived kind
// ("Label", based on http) or a Fuel task type ("shell") known to the
// catalogue gets the provider of its base kind.
func (r *Registry) Get(kind string) (Provider, bool) {
	r.mu.RLock()
	p, ok := r.providers[strings.ToLower(kind)]
	r.mu.RUnlock()
	if ok || r.cat == nil {
		return p, ok
	}
	k, found := r.cat.Lookup(kind)
	if !found || strings.EqualFold(k.Name, kind) && k.Base == "" {
		return nil, false
	}
	base := k.Name
	if k.Base != "" {
		base = k.Base
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok = r.providers[strings.ToLower(base)]
	return p, ok
}

// Kinds lists the registered kinds (lower case).
func (r *Registry) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.providers))
	for k := range r.providers {
		out = append(out, k)
	}
	return out
}

// LocalProviders returns the kinds that act on the worker's own host:
// file, directory, exec, sync, copy_files, reboot (with the default
// command) and the structural group, stage and skipped.
func LocalProviders() []Provider {
	return []Provider{
		NewFile(),
		NewDirectory(),
		NewExec(),
		NewSync(),
		NewCopyFiles(),
		NewReboot(""),
		NewUser(),
		NewUnixGroup(),
		NewService(""),
		NewFileLine(),
		NewPackage(PackageOptions{}),
		NewStructural("group"),
		NewStructural("stage"),
		NewStructural("skipped"),
	}
}

// attrKind classifies attr of a resource of kind (as requested, perhaps a
// derived kind) whose provider is p. A derived kind's own declaration wins
// when its spec is the base spec (no Wrap; with Wrap its attributes name
// fields inside the wrapped one, which the provider handles); then the base
// kind's catalogue entry; then the provider's own declaration; else a
// plain property.
func (r *Registry) attrKind(p Provider, kind, attr string) kinds.AttrKind {
	if r.cat != nil {
		if k, ok := r.cat.Lookup(kind); ok {
			if k.Base != "" && k.Wrap == "" {
				if ak, ok := k.Attributes[attr]; ok {
					return ak
				}
			}
			if k.Base != "" {
				k, ok = r.cat.Lookup(k.Base)
			}
			if ok {
				if ak, ok := k.Attributes[attr]; ok {
					return ak
				}
			}
		}
	}
	if d, ok := p.(AttrDeclarer); ok {
		if k, ok := d.Attributes()[attr]; ok {
			return k
		}
	}
	return kinds.Property
}
