package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cairn-io/cairn/internal/ttlcache"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Store tokens read "cairn_<id>_<secret>": id (16 hex characters) finds
// the record, secret (32 random bytes, base64url) is what its hash proves.
const (
	apiTokenPrefix = "cairn_"
	tokenIDLen     = 16
	// tokenShownPrefix is how many characters of a token are kept to
	// recognise it: "cairn_", the id, "_" and four of the secret.
	tokenShownPrefix = len(apiTokenPrefix) + tokenIDLen + 1 + 4
)

// Token cache bounds: an entry is trusted for tokenCacheTTL (so a token
// revoked on another server sharing the store stops working within it;
// this server forgets it at once), and at most tokenCacheMax are kept.
const (
	tokenCacheTTL = 2 * time.Second
	tokenCacheMax = 4096
	// lastUsedEvery is how often a token's lastUsed moves at most.
	lastUsedEvery = time.Minute
)

// newAPIToken makes a token and its record's id and prefix.
func newAPIToken() (id, token string) {
	var idb [tokenIDLen / 2]byte
	var secret [32]byte
	_, _ = rand.Read(idb[:])
	_, _ = rand.Read(secret[:])
	id = hex.EncodeToString(idb[:])
	return id, apiTokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
}

// splitAPIToken returns the id of a store token, or false for anything
// else.
func splitAPIToken(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, apiTokenPrefix)
	if !ok || len(rest) < tokenIDLen+2 || rest[tokenIDLen] != '_' {
		return "", false
	}
	id := rest[:tokenIDLen]
	if !plainID(id, tokenIDLen) {
		return "", false
	}
	return id, true
}

// cachedToken is a token record as read, or its absence.
type cachedToken struct {
	tok      *model.Token
	hash     []byte
	disabled bool
}

// tokenCache keeps recently read token records, bounded, so a request is
// not a store round trip each time.
type tokenCache struct {
	store store.Teams
	log   *slog.Logger
	byID  *ttlcache.Cache[cachedToken]
	// touching bounds lastUsed writes in flight to one.
	touching chan struct{}
}

func newTokenCache(st store.Teams, log *slog.Logger) *tokenCache {
	return &tokenCache{store: st, log: log, byID: ttlcache.New[cachedToken](tokenCacheMax, tokenCacheTTL), touching: make(chan struct{}, 1)}
}

// errBadToken is a token that is not (or no longer) valid.
var errBadToken = errors.New("invalid bearer token")

// lookup authenticates a store token: its record, read at most
// tokenCacheTTL ago, must exist, match the token's SHA-256 (compared in
// constant time), not be expired and belong to an enabled principal.
func (tc *tokenCache) lookup(ctx context.Context, token string) (*model.Token, error) {
	id, ok := splitAPIToken(token)
	if !ok {
		return nil, errBadToken
	}
	at := time.Now()
	e, hit := tc.byID.Get(id)
	if !hit {
		tok, hash, disabled, err := tc.store.TokenByID(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("read token: %w", err)
		}
		e = cachedToken{tok: tok, hash: hash, disabled: disabled}
		tc.byID.Put(id, e)
		if tok != nil && (tok.LastUsed == nil || at.Sub(*tok.LastUsed) > lastUsedEvery) {
			tc.touch(id, at)
		}
	}
	sum := sha256.Sum256([]byte(token))
	if e.tok == nil || subtle.ConstantTimeCompare(sum[:], e.hash) != 1 {
		return nil, errBadToken
	}
	if e.disabled {
		return nil, fmt.Errorf("%w: principal %q is disabled", errBadToken, e.tok.Principal)
	}
	if e.tok.ExpiresAt != nil && !at.Before(*e.tok.ExpiresAt) {
		return nil, fmt.Errorf("%w: token expired at %s", errBadToken, e.tok.ExpiresAt.Format(time.RFC3339))
	}
	return e.tok, nil
}

// forget drops cached records: a token deleted here stops at once.
func (tc *tokenCache) forget(ids ...string) { tc.byID.Delete(ids...) }

// forgetAll drops every cached record (a principal went).
func (tc *tokenCache) forgetAll() { tc.byID.Clear() }

// touch records lastUsed in the background, one write at a time; one
// arriving while another is in flight is skipped (lastUsed is to the
// minute at best).
func (tc *tokenCache) touch(id string, at time.Time) {
	select {
	case tc.touching <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-tc.touching }()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tc.store.TouchToken(ctx, id, at); err != nil {
			tc.log.Warn("record token use", "token", id, "error", err)
		}
	}()
}
