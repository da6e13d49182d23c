// Package codec seals Temporal payloads with AES-256-GCM, so workflow
// inputs, results and activity arguments reach the Temporal server (and its
// database) only as ciphertext, and only holders of the key can write
// payloads Cairn's workers accept: the data converter refuses unsealed
// payloads on decode, so a workflow started on Temporal directly with
// plaintext input fails before any step runs. The key comes from
// CAIRN_CODEC_KEY; the Temporal UI decodes through the HTTP handler this
// package offers, which still lets plaintext through for display.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// Metadata of sealed payloads.
const (
	// Encoding marks a sealed payload.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the key a payload was sealed with (a short
	// digest, never the key), so a payload sealed with another key fails
	// with a clear error.
	MetadataKeyID = "encryption-key-id"
)

// KeySize is the key length AES-256 needs.
const KeySize = 32

// ParseKey reads a 32-byte key written as hex (64 digits) or base64
// (standard or URL alphabet, padded or not).
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("codec key is empty")
	}
	if len(s) == 2*KeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("codec key is %d bytes, want %d (64 hex digits or base64)", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("codec key is neither 64 hex digits nor base64 of %d bytes", KeySize)
}

// ErrUnsealed is returned (wrapped) by Decode of a payload that was not
// sealed with a key: whoever wrote it did not hold Cairn's codec key.
var ErrUnsealed = errors.New("codec: payload is not sealed with Cairn's codec key; refused")

// Codec seals and opens payloads. It implements converter.PayloadCodec.
type Codec struct {
	aead  cipher.AEAD
	keyID string
	// allowPlain lets unsealed payloads through Decode (the UI's
	// endpoint, which only displays them).
	allowPlain bool
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns a codec over a 32-byte key. Its Decode refuses payloads that
// are not sealed (ErrUnsealed), so only holders of the key write what the
// workers read.
func New(key []byte) (*Codec, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("codec key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Codec{aead: aead, keyID: KeyID(key)}, nil
}

// KeyID names a key without revealing it: a short digest, the one sealed
// payloads carry (MetadataKeyID). Servers and agents compare theirs with
// it.
func KeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("cairn codec key id\x00"), key...))
	return hex.EncodeToString(sum[:6])
}

// Encode seals each payload whole (metadata and data).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("codec: marshal payload: %w", err)
		}
		nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("codec: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(Encoding),
				MetadataKeyID:              []byte(c.keyID),
			},
			Data: c.aead.Seal(nonce, nonce, plain, []byte(Encoding)),
		}
	}
	return out, nil
}

// newDisplay returns a codec whose Decode lets unsealed payloads through
// unchanged, for showing histories (Temporal's own payloads, payloads
// written before the key was set); it never feeds a worker.
func newDisplay(key []byte) (*Codec, error) {
	c, err := New(key)
	if err != nil {
		return nil, err
	}
	c.allowPlain = true
	return c, nil
}

// Decode opens sealed payloads. An unsealed payload fails with ErrUnsealed
// (it passes through unchanged only in the UI's endpoint); a payload sealed
// with another key, or altered, fails too.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			if !c.allowPlain {
				return nil, fmt.Errorf("%w (encoding %q)", ErrUnsealed, truncate(string(p.GetMetadata()[converter.MetadataEncoding]), 64))
			}
			out[i] = p
			continue
		}
		if id := string(p.GetMetadata()[MetadataKeyID]); id != c.keyID {
			return nil, fmt.Errorf("codec: payload sealed with key %s, this key is %s", id, c.keyID)
		}
		data := p.GetData()
		if len(data) < c.aead.NonceSize() {
			return nil, errors.New("codec: sealed payload too short")
		}
		plain, err := c.aead.Open(nil, data[:c.aead.NonceSize()], data[c.aead.NonceSize():], []byte(Encoding))
		if err != nil {
			return nil, errors.New("codec: sealed payload does not open (wrong key or tampered data)")
		}
		var decoded commonpb.Payload
		if err := proto.Unmarshal(plain, &decoded); err != nil {
			return nil, fmt.Errorf("codec: unmarshal payload: %w", err)
		}
		out[i] = &decoded
	}
	return out, nil
}

// DataConverter is the default data converter with payloads sealed by key
// and unsealed payloads refused on decode; give it to
// client.Options.DataConverter of the server, workers, agents and the
// starter alike. Search attributes and failure messages do not go through
// it and stay readable by the server.
func DataConverter(key []byte) (converter.DataConverter, error) {
	c, err := New(key)
	if err != nil {
		return nil, err
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c), nil
}

// FailureConverter is the failure converter of every client and worker
// using dc (the codec's): failures' messages and stack traces go into an
// encoded attributes payload, sealed like any other, so history shows
// "Encoded failure" in their place; a client with dc (and the Temporal
// UI through the codec endpoint) reads them back.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})
}

// HandlerOptions configure the codec endpoint.
type HandlerOptions struct {
	// AllowOrigin is the Temporal UI's origin (e.g. http://localhost:8233),
	// allowed to call the endpoint from the browser; empty sends no CORS
	// headers.
	AllowOrigin string
}

// Handler serves the Temporal UI's codec endpoint (POST /encode and
// /decode with {"payloads": [...]}). Decode lets unsealed payloads through
// unchanged, so the UI shows Temporal's own payloads too. Mount it behind
// the API's authentication: whoever reaches it can read every payload and
// seal new ones.
func Handler(key []byte, o HandlerOptions) (http.Handler, error) {
	c, err := newDisplay(key)
	if err != nil {
		return nil, err
	}
	inner := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.AllowOrigin != "" {
			w.Header().Set("Access-Control-Allow-Origin", o.AllowOrigin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		inner.ServeHTTP(w, r)
	}), nil
}

// truncate bounds a peer's string before it goes into an error.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
