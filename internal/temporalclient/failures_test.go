package temporalclient_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/temporalclient"
)

// With the codec's data converter, every client Cairn builds seals
// failures with it; without one, failures stay the SDK's default.
func TestFailuresAreSealedWithTheCodec(t *testing.T) {
	key := make([]byte, codec.KeySize)
	dc, err := codec.DataConverter(key)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		params temporalclient.Params
		sealed bool
	}{
		{"with the codec", temporalclient.Params{DataConverter: dc}, true},
		{"without", temporalclient.Params{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := temporalclient.Options(&config.Config{TemporalAddress: "127.0.0.1:7233"}, tc.params)
			require.NoError(t, err)
			if !tc.sealed {
				assert.Nil(t, o.FailureConverter)
				return
			}
			require.NotNil(t, o.FailureConverter)
			f := o.FailureConverter.ErrorToFailure(errors.New("step failed: hunter2"))
			assert.Equal(t, "Encoded failure", f.GetMessage())
			assert.NotContains(t, string(f.GetEncodedAttributes().GetData()), "hunter2")
		})
	}
}
