package api

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// issuer is an OIDC provider over HTTP: discovery, its key set, and ID
// tokens signed with its key.
type issuer struct {
	url    string
	signer jose.Signer
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	require.NoError(t, err)
	iss := &issuer{signer: signer}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.url, "jwks_uri": iss.url + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256"}, "response_types_supported": []string{"id_token"},
			"subject_types_supported": []string{"public"}, "authorization_endpoint": iss.url + "/auth"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL
	return iss
}

func (i *issuer) token(t *testing.T, aud string, exp time.Time, extra map[string]any) string {
	t.Helper()
	claims := map[string]any{"iss": i.url, "aud": aud, "sub": "u-1", "iat": time.Now().Unix(), "exp": exp.Unix()}
	for k, v := range extra {
		claims[k] = v
	}
	tok, err := jwt.Signed(i.signer).Claims(claims).Serialize()
	require.NoError(t, err)
	return tok
}

// ID tokens of the configured issuer act as "oidc:" principals with the
// grants their groups map to; a token for another audience, expired, or
// signed by another key is refused.
func TestOIDCTokens(t *testing.T) {
	iss := newIssuer(t)
	s := newTestServer(t, sqliteURL(t), withToken("adm"))
	var web model.StackRecord
	s.do(http.MethodPost, "/v1/stacks", model.StackInput{Name: "web"}).expect(t, http.StatusCreated).json(t, &web)
	var other model.StackRecord
	s.do(http.MethodPost, "/v1/stacks", model.StackInput{Name: "other"}).expect(t, http.StatusCreated).json(t, &other)
	as := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	hour := time.Now().Add(time.Hour)

	// Grants name the stack by id: the group maps to web's. The server
	// reads the same store.
	cfg := map[string][]model.Grant{"web-team": {{Role: model.RoleDeployer, Stacks: []string{web.ID}}}}
	s2 := newTestServer(t, sqliteURL(t), withToken("adm"), withConfig(func(c *Config) {
		c.OIDC = &OIDCConfig{Issuer: iss.url, Audience: "cairn", Groups: cfg}
	}), withDeps(func(d *Deps) { d.Store = s.Store }))

	alice := iss.token(t, "cairn", hour, map[string]any{"email": "alice@example.com", "groups": []string{"web-team", "other"}})
	var who model.Whoami
	s2.do(http.MethodGet, "/v1/whoami", nil, as(alice)...).expect(t, http.StatusOK).json(t, &who)
	assert.Equal(t, "oidc:alice@example.com", who.Principal)
	assert.Equal(t, cfg["web-team"], who.Roles)
	s2.do(http.MethodGet, "/v1/stacks/"+web.ID, nil, as(alice)...).expect(t, http.StatusOK)
	s2.do(http.MethodGet, "/v1/stacks/"+other.ID, nil, as(alice)...).expect(t, http.StatusForbidden)

	bob := iss.token(t, "cairn", hour, map[string]any{"groups": []string{"nobody"}})
	s2.do(http.MethodGet, "/v1/whoami", nil, as(bob)...).expect(t, http.StatusOK).json(t, &who)
	assert.Equal(t, "oidc:u-1", who.Principal, "no email: the subject")
	assert.Empty(t, who.Roles)
	s2.do(http.MethodGet, "/v1/stacks/"+web.ID, nil, as(bob)...).expect(t, http.StatusForbidden)

	for name, tok := range map[string]string{
		"another audience": iss.token(t, "someone-else", hour, nil),
		"expired":          iss.token(t, "cairn", time.Now().Add(-time.Minute), nil),
		"another issuer":   newIssuer(t).token(t, "cairn", hour, nil),
	} {
		t.Run(name, func(t *testing.T) {
			s2.do(http.MethodGet, "/v1/whoami", nil, as(tok)...).expect(t, http.StatusUnauthorized)
		})
	}
}
