package temporalclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/temporalclient"
	"github.com/cairn-io/cairn/internal/testenv"
)

func TestDialOverMutualTLS(t *testing.T) {
	p := newPKI(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	c, err := temporalclient.Dial(ctx, p.config(p.mtls()), temporalclient.Params{})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	require.NoError(t, err)
	ns, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"})
	require.NoError(t, err)
	assert.Equal(t, "default", ns.GetNamespaceInfo().GetName())

	calls := p.front.Calls()
	require.NotEmpty(t, calls)
	for _, call := range calls {
		assert.Equal(t, "cairn-worker", call.ClientCN, call.Method)
	}
	assert.Contains(t, methods(calls), "/temporal.api.workflowservice.v1.WorkflowService/DescribeNamespace")
}

func TestDialWithoutClientCertificateFails(t *testing.T) {
	p := newPKI(t, "")
	sec := p.mtls()
	sec.CertFile, sec.KeyFile = "", ""
	_, err := dialFailing(t, p, sec)
	require.Error(t, err)
	// The server's refusal may reach the client as its alert
	// ("certificate required") or as a closed connection: the error says
	// no certificate was offered.
	assert.Contains(t, err.Error(), "connect to Temporal at "+p.front.HostPort+" (TLS without a client certificate)")
	assert.Empty(t, p.front.Calls(), "no call may pass the frontend without a client certificate")
}

func TestDialWithWrongCAFails(t *testing.T) {
	p := newPKI(t, "")
	other := testenv.NewCA(t, "another CA")
	sec := p.mtls()
	sec.CAFile = testenv.WriteFile(t, t.TempDir(), "other-ca.pem", other.PEM)
	_, err := dialFailing(t, p, sec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect to Temporal at "+p.front.HostPort+" (mutual TLS)")
	assert.Contains(t, err.Error(), "certificate signed by unknown authority")
	assert.Empty(t, p.front.Calls())
}

func TestDialWithClientCertificateOfAnotherCAFails(t *testing.T) {
	p := newPKI(t, "")
	cert, key := testenv.NewCA(t, "another CA").Client(t, "intruder")
	sec := p.mtls()
	dir := t.TempDir()
	sec.CertFile = testenv.WriteFile(t, dir, "c.pem", cert)
	sec.KeyFile = testenv.WriteFile(t, dir, "k.pem", key)
	_, err := dialFailing(t, p, sec)
	require.Error(t, err)
	// The refusal reaches the client as the server's alert ("unknown
	// certificate authority") or as a closed connection.
	assert.Contains(t, err.Error(), "(mutual TLS)")
	assert.Empty(t, p.front.Calls())
}

func TestDialPlainTextToTLSFrontendFails(t *testing.T) {
	p := newPKI(t, "")
	_, err := dialFailing(t, p, config.TemporalSecurity{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(plain text)")
}

// dialFailing dials with a short deadline, for dials meant to fail (the
// SDK retries unavailable servers until its deadline).
func dialFailing(t *testing.T, p *pki, sec config.TemporalSecurity) (client.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := temporalclient.Dial(ctx, p.config(sec), temporalclient.Params{})
	if err == nil {
		c.Close()
	}
	return c, err
}

func methods(calls []testenv.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Method
	}
	return out
}
