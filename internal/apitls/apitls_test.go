package apitls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

func TestParseFingerprint(t *testing.T) {
	der := []byte("certificate bytes")
	fp := Fingerprint(der)
	require.True(t, strings.HasPrefix(fp, "sha256:"))
	require.Len(t, fp, len("sha256:")+64)
	want, err := ParseFingerprint(fp)
	require.NoError(t, err)
	hexPart := strings.TrimPrefix(fp, "sha256:")
	var colons []string
	for i := 0; i < len(hexPart); i += 2 {
		colons = append(colons, strings.ToUpper(hexPart[i:i+2]))
	}
	for _, in := range []string{fp, hexPart, "SHA256:" + strings.ToUpper(hexPart), strings.Join(colons, ":"), " " + fp + "\n"} {
		got, err := ParseFingerprint(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "sha256:", "sha256:abcd", "sha1:" + hexPart, hexPart + "00", strings.Repeat("zz", 32)} {
		_, err := ParseFingerprint(in)
		assert.Error(t, err, in)
	}
}

// The self-signed certificate is made once: a restart serves the same
// one, so the fingerprint agents pinned stays valid; its key is the
// server's alone.
func TestSelfSignedCertificateIsKept(t *testing.T) {
	dir := t.TempDir()
	cert, fp, err := ServerCertificate("", "", dir, []string{"10.1.2.3", "cairn.example.com", "", "0.0.0.0"})
	require.NoError(t, err)
	assert.Equal(t, Fingerprint(cert.Certificate[0]), fp)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"localhost", "cairn.example.com"}, leaf.DNSNames)
	var ips []string
	for _, ip := range leaf.IPAddresses {
		ips = append(ips, ip.String())
	}
	assert.ElementsMatch(t, []string{"127.0.0.1", "::1", "10.1.2.3"}, ips)
	require.NoError(t, leaf.VerifyHostname("10.1.2.3"))

	fi, err := os.Stat(filepath.Join(dir, "tls", "api-key.pem"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	_, again, err := ServerCertificate("", "", dir, []string{"10.9.9.9"})
	require.NoError(t, err)
	assert.Equal(t, fp, again, "a restart made a new certificate")
}

func TestOperatorCertificate(t *testing.T) {
	ca := testenv.NewCA(t, "ops CA")
	certPEM, keyPEM := ca.Server(t, "cairn.test")
	dir := t.TempDir()
	certFile := testenv.WriteFile(t, dir, "cert.pem", certPEM)
	keyFile := testenv.WriteFile(t, dir, "key.pem", keyPEM)
	_, fp, err := ServerCertificate(certFile, keyFile, dir, nil)
	require.NoError(t, err)
	block, _ := pem.Decode(certPEM)
	assert.Equal(t, Fingerprint(block.Bytes), fp)
	_, err = os.Stat(filepath.Join(dir, "tls"))
	assert.True(t, os.IsNotExist(err), "a self-signed certificate was made beside the operator's")

	_, _, err = ServerCertificate(certFile, "", dir, nil)
	assert.ErrorContains(t, err, "go together")
	_, _, err = ServerCertificate(keyFile, keyFile, dir, nil)
	assert.Error(t, err)
}

func TestClientConfigRefusals(t *testing.T) {
	ca := testenv.WriteFile(t, t.TempDir(), "ca.pem", testenv.NewCA(t, "x").PEM)
	fp := Fingerprint([]byte("x"))
	tests := []struct {
		name    string
		url     string
		opts    ClientOptions
		wantErr string
		wantTLS bool
	}{
		{"plain HTTP to loopback", "http://127.0.0.1:8080", ClientOptions{}, "", false},
		{"plain HTTP to localhost", "http://localhost:8080", ClientOptions{}, "", false},
		{"plain HTTP to IPv6 loopback", "http://[::1]:8080", ClientOptions{}, "", false},
		{"plain HTTP beyond loopback", "http://10.0.0.5:8080", ClientOptions{}, "refusing plain HTTP", false},
		{"plain HTTP to a name", "http://cairn.example.com:8080", ClientOptions{}, "refusing plain HTTP", false},
		{"plain HTTP allowed", "http://10.0.0.5:8080", ClientOptions{AllowPlainHTTP: true}, "", false},
		{"plain HTTP with a pin", "http://127.0.0.1:8080", ClientOptions{Fingerprint: fp}, "use https://", false},
		{"https with a pin", "https://10.0.0.5:8080", ClientOptions{Fingerprint: fp}, "", true},
		{"https with a CA", "https://10.0.0.5:8080", ClientOptions{CAFile: ca}, "", true},
		{"https with the system's roots", "https://cairn.example.com", ClientOptions{}, "", true},
		{"a bad pin", "https://10.0.0.5:8080", ClientOptions{Fingerprint: "sha256:12"}, "64 hex digits", false},
		{"a missing CA", "https://10.0.0.5:8080", ClientOptions{CAFile: "/nonexistent/ca.pem"}, "server CA", false},
		{"not a URL", "10.0.0.5:8080", ClientOptions{}, "want http(s)", false},
		{"another scheme", "ftp://10.0.0.5", ClientOptions{}, "want http(s)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ClientConfig(tt.url, tt.opts)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantTLS, cfg != nil)
		})
	}
}

// A pinned client reaches the server with that certificate, whatever its
// names, and no other; a CA-trusting client checks the chain and name.
func TestPinnedConnection(t *testing.T) {
	dir := t.TempDir()
	cert, fp, err := ServerCertificate("", "", dir, nil)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.TLS = ServerConfig(cert)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	get := func(o ClientOptions) error {
		cfg, err := ClientConfig(srv.URL, o)
		require.NoError(t, err)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	require.NoError(t, get(ClientOptions{Fingerprint: fp}))
	_, otherFP, err := ServerCertificate("", "", t.TempDir(), nil)
	require.NoError(t, err)
	require.NotEqual(t, fp, otherFP)
	err = get(ClientOptions{Fingerprint: otherFP})
	assert.ErrorContains(t, err, "not the pinned one")
	assert.True(t, IsTrustError(err), "a pin mismatch is not a trust error: %v", err)
	err = get(ClientOptions{})
	require.Error(t, err, "the system's roots trusted a self-signed certificate")
	assert.True(t, IsTrustError(err), "an unknown authority is not a trust error: %v", err)
	_, err = http.Get("http://127.0.0.1:1/")
	require.Error(t, err)
	assert.False(t, IsTrustError(err), "a refused connection is a trust error")
	// The self-signed certificate as its own CA: valid for 127.0.0.1.
	require.NoError(t, get(ClientOptions{CAFile: filepath.Join(dir, "tls", "api-cert.pem")}))
	// TLS below 1.2 is refused.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}}} //nolint:gosec // the test of the refusal
	_, err = c.Get(srv.URL)
	assert.Error(t, err)
}
