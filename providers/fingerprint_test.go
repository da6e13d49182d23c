package providers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// leaksDigest reports whether anything in ch (its changes, states and
// report, as persisted) carries the plain sha256 of s.
func leaksDigest(ch Change, s string) bool {
	raw, err := json.Marshal(ch)
	if err != nil {
		panic(err)
	}
	return strings.Contains(string(raw), sha256Hex(s))
}

// Content made of a secret is fingerprinted with HMAC-SHA256 under the
// registry's key, never with a plain sha256 someone could brute-force; the
// keyed fingerprint still tells a change from none.
func TestFileSecretContentIsFingerprintedWithAKey(t *testing.T) {
	ctx := context.Background()
	const secret = "hunter2"
	key := []byte(strings.Repeat("k", FingerprintKeySize))
	r := localRegistry(t).WithFingerprintKey(key)
	node := localNode(t)
	req := Request{Kind: "file", Name: "pw", Node: node, Spec: model.Spec{"path": "/pw", "content": secret}, Secrets: []string{secret}}

	plan := req
	plan.Noop = true
	pch, err := r.Converge(ctx, plan)
	require.NoError(t, err)
	require.Equal(t, model.ActionCreate, pch.Action)
	shown := ""
	for _, c := range pch.Changes {
		if c.Path == "content" {
			shown, _ = c.New.(string)
		}
	}
	assert.Equal(t, keyedDigest(key, []byte(secret)), shown)
	assert.True(t, strings.HasPrefix(shown, keyedDigestPrefix))
	assert.False(t, leaksDigest(pch, secret), "the plan carries sha256(secret)")

	ch, err := r.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.OutcomeCreated, ch.Outcome)
	assert.Equal(t, keyedDigest(key, []byte(secret)), ch.After.Outputs["checksum"])
	assert.False(t, leaksDigest(ch, secret), "the change carries sha256(secret)")
	raw, err := os.ReadFile(filepath.Join(node.Root, "pw"))
	require.NoError(t, err)
	assert.Equal(t, secret, string(raw))

	// Converged: the keyed fingerprints of the file and of the spec agree.
	again, err := r.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action)
	assert.False(t, leaksDigest(again, secret))

	// A new secret value is a change, shown keyed.
	next := req
	next.Spec = model.Spec{"path": "/pw", "content": "hunter3"}
	next.Secrets = []string{"hunter3"}
	upd, err := r.Converge(ctx, next)
	require.NoError(t, err)
	assert.Equal(t, model.ActionUpdate, upd.Action)
	require.Len(t, upd.Changes, 1)
	assert.Equal(t, keyedDigest(key, []byte(secret)), upd.Changes[0].Old)
	assert.Equal(t, keyedDigest(key, []byte("hunter3")), upd.Changes[0].New)
	assert.False(t, leaksDigest(upd, secret))
	assert.False(t, leaksDigest(upd, "hunter3"))
}

// A secret inside other text is fingerprinted with the key too: the rest
// of the file is known from the package, so a plain digest would be as
// easy to brute-force.
func TestFileContentHoldingASecretIsKeyed(t *testing.T) {
	const secret = "s3cret-token"
	content := "[db]\npassword = " + secret + "\n"
	r := localRegistry(t)
	ch, err := r.Converge(context.Background(), Request{Kind: "file", Name: "cfg", Node: localNode(t),
		Spec: model.Spec{"path": "/cfg.ini", "content": content}, Secrets: []string{secret}})
	require.NoError(t, err)
	sum, _ := ch.After.Outputs["checksum"].(string)
	assert.True(t, strings.HasPrefix(sum, keyedDigestPrefix), sum)
	assert.False(t, leaksDigest(ch, content))
}

// Content without a secret keeps its plain sha256 (what sha256sum says),
// and the key decides the keyed fingerprint: another key, another one.
func TestFingerprintKinds(t *testing.T) {
	r := localRegistry(t)
	ch, err := r.Converge(context.Background(), Request{Kind: "file", Name: "motd", Node: localNode(t),
		Spec: model.Spec{"path": "/motd", "content": "hello\n"}, Secrets: []string{"unrelated"}})
	require.NoError(t, err)
	assert.Equal(t, plainDigestPrefix+sha256Hex("hello\n"), ch.After.Outputs["checksum"])

	a := keyedDigest([]byte(strings.Repeat("a", 32)), []byte("pw"))
	b := keyedDigest([]byte(strings.Repeat("b", 32)), []byte("pw"))
	assert.NotEqual(t, a, b)
	assert.NotContains(t, a, sha256Hex("pw"))

	// Two registries without a configured key key differently: neither
	// falls back to a plain digest.
	env1 := Env{Secrets: []string{"pw"}, fingerprintKey: NewRegistry(nil).fingerprintKey}
	env2 := Env{Secrets: []string{"pw"}, fingerprintKey: NewRegistry(nil).fingerprintKey}
	f1, f2 := contentFingerprinter(env1, "pw"), contentFingerprinter(env2, "pw")
	assert.NotEqual(t, f1.sum([]byte("pw")), f2.sum([]byte("pw")))
	assert.True(t, strings.HasPrefix(contentFingerprinter(Env{Secrets: []string{"pw"}}, "pw").sum([]byte("pw")), keyedDigestPrefix))
	// A key too short to be one is ignored.
	short := NewRegistry(nil)
	before := short.fingerprintKey
	short.WithFingerprintKey([]byte("short"))
	assert.Equal(t, before, short.fingerprintKey)
}
