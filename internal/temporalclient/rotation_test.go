package temporalclient_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/internal/temporalclient"
)

// A client certificate replaced on disk (as a mounted secret is rotated) is
// the one the next connection presents, without rebuilding the options.
func TestClientCertificateReReadWhenItChangesOnDisk(t *testing.T) {
	p := newPKI(t, "")
	opts, err := temporalclient.Options(p.config(p.mtls()), temporalclient.Params{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	lastCN := func() string {
		t.Helper()
		c, err := client.DialContext(ctx, opts)
		require.NoError(t, err)
		c.Close()
		calls := p.front.Calls()
		require.NotEmpty(t, calls)
		return calls[len(calls)-1].ClientCN
	}
	assert.Equal(t, "cairn-worker", lastCN())

	cert, key := p.ca.Client(t, "cairn-worker-rotated")
	require.NoError(t, os.WriteFile(p.keyFile, key, 0o600))
	require.NoError(t, os.WriteFile(p.certFile, cert, 0o600))
	assert.Equal(t, "cairn-worker-rotated", lastCN())

	// A half-done rotation (a certificate whose key is not there yet)
	// keeps the previous pair in use.
	other, _ := p.ca.Client(t, "cairn-worker-half")
	require.NoError(t, os.WriteFile(p.certFile, other, 0o600))
	assert.Equal(t, "cairn-worker-rotated", lastCN())
}
