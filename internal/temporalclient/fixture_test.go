package temporalclient_test

import (
	"testing"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
)

// pki is a test's CA with a TLS frontend before the shared dev server, and
// the files a client configures: the CA and a client certificate.
type pki struct {
	ca       *testenv.CA
	front    *testenv.TLSFrontend
	dir      string
	caFile   string
	certFile string
	keyFile  string
}

// newPKI starts a TLS frontend requiring a client certificate of a fresh
// CA (and apiKey, when not empty) before the dev server.
func newPKI(t *testing.T, apiKey string) *pki {
	t.Helper()
	dev := testenv.Temporal(t)
	p := &pki{ca: testenv.NewCA(t, "cairn test CA"), dir: t.TempDir()}
	serverCert, serverKey := p.ca.Server(t, "temporal.test")
	p.front = testenv.StartTLSFrontend(t, dev.HostPort, testenv.TLSFrontendOptions{
		Certificate: testenv.KeyPair(t, serverCert, serverKey),
		ClientCAs:   p.ca.Pool(),
		APIKey:      apiKey,
	})
	p.caFile = testenv.WriteFile(t, p.dir, "ca.pem", p.ca.PEM)
	cert, key := p.ca.Client(t, "cairn-worker")
	p.certFile = testenv.WriteFile(t, p.dir, "client.pem", cert)
	p.keyFile = testenv.WriteFile(t, p.dir, "client-key.pem", key)
	return p
}

// config is Cairn's configuration for the frontend with the given
// security settings.
func (p *pki) config(sec config.TemporalSecurity) *config.Config {
	return &config.Config{TemporalAddress: p.front.HostPort, TemporalNamespace: "default", Temporal: sec}
}

// mtls is the full mutual-TLS configuration.
func (p *pki) mtls() config.TemporalSecurity {
	return config.TemporalSecurity{CAFile: p.caFile, CertFile: p.certFile, KeyFile: p.keyFile, ServerName: "temporal.test"}
}
