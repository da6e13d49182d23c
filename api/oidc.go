package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/cairn-io/cairn/model"
)

// OIDCConfig accepts OIDC ID tokens (JWTs) of an issuer as bearer tokens:
// their principal is "oidc:" and the token's name claim, their grants
// those its groups map to.
type OIDCConfig struct {
	// Issuer is the issuer URL (discovered at its
	// /.well-known/openid-configuration); Audience the client id tokens
	// must be issued for.
	Issuer   string
	Audience string
	// NameClaim names the principal (default "email"; "sub" when the token
	// has no such claim); GroupsClaim lists its groups (default "groups").
	NameClaim   string
	GroupsClaim string
	// Groups maps a group to the grants its members hold; a token of no
	// mapped group is authenticated but may do nothing.
	Groups map[string][]model.Grant
}

// oidcPrefix starts the names of principals from an issuer, so none is
// taken for a store principal or a named token.
const oidcPrefix = "oidc:"

// oidcFetchTimeout bounds discovery and each key set fetch.
const oidcFetchTimeout = 10 * time.Second

// oidcAuth verifies ID tokens; the issuer is discovered at the first
// token (so a server starts while its issuer is down) and again after a
// failed discovery.
type oidcAuth struct {
	cfg      OIDCConfig
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

func newOIDCAuth(cfg *OIDCConfig) (*oidcAuth, error) {
	if cfg == nil {
		return nil, nil
	}
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidc: issuer and audience are required")
	}
	if err := checkGrantsOf(cfg.Groups); err != nil {
		return nil, err
	}
	c := *cfg
	if c.NameClaim == "" {
		c.NameClaim = "email"
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	return &oidcAuth{cfg: c}, nil
}

// checkGrantsOf refuses group mappings with unknown roles or bad scopes.
func checkGrantsOf(groups map[string][]model.Grant) error {
	for g, grants := range groups {
		if d := checkGrants(grants); len(d) > 0 {
			return fmt.Errorf("oidc: grants of group %q: %s: %s", g, d[0].Path, d[0].Message)
		}
	}
	return nil
}

// looksLikeJWT tells an ID token from Cairn's own tokens.
func looksLikeJWT(token string) bool {
	return strings.HasPrefix(token, "eyJ") && strings.Count(token, ".") == 2
}

func (o *oidcAuth) getVerifier() (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, nil
	}
	// The key set keeps this context for its later fetches: it must not
	// end, and its client bounds each fetch.
	ctx := oidc.ClientContext(context.Background(), &http.Client{Timeout: oidcFetchTimeout})
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery of %s: %w", o.cfg.Issuer, err)
	}
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.cfg.Audience})
	return o.verifier, nil
}

// authenticate verifies an ID token (signature by the issuer's keys,
// issuer, audience, expiry) and maps its groups to grants.
func (o *oidcAuth) authenticate(ctx context.Context, token string) (*identity, error) {
	v, err := o.getVerifier()
	if err != nil {
		return nil, err
	}
	idt, err := v.Verify(ctx, token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadToken, err)
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: claims: %v", errBadToken, err)
	}
	var name string
	if raw, ok := claims[o.cfg.NameClaim]; !ok || json.Unmarshal(raw, &name) != nil || name == "" {
		name = idt.Subject
	}
	var groups []string
	if raw, ok := claims[o.cfg.GroupsClaim]; ok {
		_ = json.Unmarshal(raw, &groups) // not a list of strings: no groups
	}
	id := &identity{name: oidcPrefix + name, grants: []model.Grant{}}
	for _, g := range slices.Compact(slices.Sorted(slices.Values(groups))) {
		id.grants = append(id.grants, o.cfg.Groups[g]...)
	}
	return id, nil
}
