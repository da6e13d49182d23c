package codec_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"

	"github.com/cairn-io/cairn/internal/codec"
)

// A failure converted with the codec's failure converter carries its
// message only in its sealed encoded attributes, which the codec
// endpoint (what the Temporal UI asks) opens, and a client with the key
// reads back.
func TestFailuresAreSealedAndTheUIDecodesThem(t *testing.T) {
	key := newKey(t)
	dc, err := codec.DataConverter(key)
	require.NoError(t, err)
	fc := codec.FailureConverter(dc)
	const msg = "exec: exit status 3: db-password=hunter2"
	f := fc.ErrorToFailure(errors.New(msg))
	assert.Equal(t, "Encoded failure", f.GetMessage())
	attrs := f.GetEncodedAttributes()
	require.NotNil(t, attrs)
	assert.NotContains(t, string(attrs.GetData()), "hunter2", "the attributes are not sealed")
	assert.Contains(t, fc.FailureToError(f).Error(), msg, "a client with the key reads the message")

	h, err := codec.Handler(key, codec.HandlerOptions{})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	body, err := json.Marshal(map[string]any{"payloads": []*commonpb.Payload{attrs}})
	require.NoError(t, err)
	resp, err := http.Post(srv.URL+"/decode", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Payloads []struct {
			Data string `json:"data"`
		} `json:"payloads"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Payloads, 1)
	data, err := base64.StdEncoding.DecodeString(out.Payloads[0].Data)
	require.NoError(t, err)
	assert.Contains(t, string(data), "hunter2", "the codec endpoint does not open the failure")
}
