package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/cairn-io/cairn/internal/codec"
)

// codecServer is the API with the real codec endpoint mounted, and a
// sealed payload to decode.
func codecServer(t *testing.T, opts ...serverOption) (*testServer, string) {
	t.Helper()
	key := []byte(strings.Repeat("k", codec.KeySize))
	h, err := codec.Handler(key, codec.HandlerOptions{})
	require.NoError(t, err)
	c, err := codec.New(key)
	require.NoError(t, err)
	plain, err := converter.GetDefaultDataConverter().ToPayloads("shown in the UI")
	require.NoError(t, err)
	sealed, err := c.Encode(plain.Payloads)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"payloads": sealed})
	require.NoError(t, err)
	opts = append(opts, withDeps(func(d *Deps) { d.Codec = h }))
	return newTestServer(t, sqliteURL(t), opts...), string(body)
}

// decoded returns the data of the first payload of a codec answer.
func decoded(t *testing.T, r *response) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out struct {
		Payloads []struct {
			Data string `json:"data"`
		} `json:"payloads"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &out))
	require.Len(t, out.Payloads, 1)
	data, err := base64.StdEncoding.DecodeString(out.Payloads[0].Data)
	require.NoError(t, err)
	return string(data)
}

// The codec endpoint opens every payload, so it sits behind the API's
// token; the Temporal UI on its own origin can still use it.
func TestCodecNeedsTheTokenAndServesTheUI(t *testing.T) {
	const ui = "http://localhost:8233"
	s, sealed := codecServer(t, withToken("s3cret"))
	decode := browserRequest{method: http.MethodPost, path: "/codec/decode", ctype: "application/json", body: sealed,
		headers: map[string]string{"X-Namespace": "default"}}

	send(t, s.URL, decode).expect(t, http.StatusUnauthorized)
	wrong := decode
	wrong.token = "guess"
	send(t, s.URL, wrong).expect(t, http.StatusUnauthorized)

	// The UI's preflight carries no token and is answered for its origin.
	for _, origin := range []string{ui, "http://127.0.0.1:8233"} {
		pre := send(t, s.URL, browserRequest{method: http.MethodOptions, path: "/codec/decode", origin: origin,
			headers: map[string]string{"Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": "authorization,content-type,x-namespace"}})
		require.Equal(t, http.StatusNoContent, pre.Status, "%s", pre.Body)
		assert.Equal(t, origin, pre.Header.Get("Access-Control-Allow-Origin"))
		assert.Equal(t, "POST", pre.Header.Get("Access-Control-Allow-Methods"))
		for _, h := range []string{"Authorization", "Content-Type", "X-Namespace"} {
			assert.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), h)
		}
		assert.Equal(t, "true", pre.Header.Get("Access-Control-Allow-Credentials"))
	}

	fromUI := decode
	fromUI.origin, fromUI.token = ui, "s3cret"
	r := send(t, s.URL, fromUI)
	assert.Contains(t, decoded(t, r), "shown in the UI")
	assert.Equal(t, ui, r.Header.Get("Access-Control-Allow-Origin"))

	// Another origin gets neither the preflight nor the payloads, even
	// with the token; the UI's origin may not use the rest of the API.
	send(t, s.URL, browserRequest{method: http.MethodOptions, path: "/codec/decode", origin: "http://evil.example",
		headers: map[string]string{"Access-Control-Request-Method": "POST"}}).expect(t, http.StatusForbidden)
	foreign := fromUI
	foreign.origin = "http://evil.example"
	send(t, s.URL, foreign).expect(t, http.StatusForbidden)
	send(t, s.URL, browserRequest{method: http.MethodPost, path: "/v1/stacks", origin: ui, token: "s3cret",
		ctype: "application/json", body: `{"name": "from-the-ui"}`}).expect(t, http.StatusForbidden)
}

// The UI's origin is configurable.
func TestCodecOriginsAreConfigurable(t *testing.T) {
	const ui = "https://temporal.example"
	s, sealed := codecServer(t, withConfig(func(c *Config) { c.CodecOrigins = []string{ui} }))
	r := send(t, s.URL, browserRequest{method: http.MethodPost, path: "/codec/decode", origin: ui,
		ctype: "application/json", body: sealed})
	assert.Contains(t, decoded(t, r), "shown in the UI")
	send(t, s.URL, browserRequest{method: http.MethodPost, path: "/codec/decode", origin: "http://localhost:8233",
		ctype: "application/json", body: sealed}).expect(t, http.StatusForbidden)
}

// Without a token the codec endpoint answers loopback Hosts only, like
// the API, and bodies over its limit get 413 whether their length is
// declared or not.
func TestCodecHostsAndSizeLimit(t *testing.T) {
	const limit = 4 << 10
	s, sealed := codecServer(t, withConfig(func(c *Config) { c.CodecBodyLimit = limit }))
	require.Less(t, len(sealed), limit)
	decode := browserRequest{method: http.MethodPost, path: "/codec/decode", ctype: "application/json", body: sealed}
	assert.Contains(t, decoded(t, send(t, s.URL, decode)), "shown in the UI")

	rebound := decode
	rebound.host = "evil.example"
	send(t, s.URL, rebound).expect(t, http.StatusMisdirectedRequest)

	big := `{"payloads": [], "pad": "` + strings.Repeat("x", limit) + `"}`
	for _, chunked := range []bool{false, true} {
		r := send(t, s.URL, browserRequest{method: http.MethodPost, path: "/codec/decode", ctype: "application/json",
			body: big, hideLength: chunked})
		r.expect(t, http.StatusRequestEntityTooLarge)
	}
	plain := decode
	plain.ctype = "text/plain"
	send(t, s.URL, plain).expect(t, http.StatusUnsupportedMediaType)
}
