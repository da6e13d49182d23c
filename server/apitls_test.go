package server

import (
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/testenv"
)

// The API is served over TLS beyond loopback unless explicitly allowed
// otherwise, and plain HTTP beyond loopback is refused.
func TestAPITLSByDefaultBeyondLoopback(t *testing.T) {
	ca := testenv.NewCA(t, "ops CA")
	certPEM, keyPEM := ca.Server(t, "cairn.test")
	files := t.TempDir()
	certFile := testenv.WriteFile(t, files, "cert.pem", certPEM)
	keyFile := testenv.WriteFile(t, files, "key.pem", keyPEM)
	tests := []struct {
		name    string
		vals    map[string]string
		wantTLS bool
		wantErr string
		ownCert bool
	}{
		{"loopback: plain", map[string]string{"CAIRN_API_ADDR": "127.0.0.1:8080"}, false, "", false},
		{"localhost: plain", map[string]string{"CAIRN_API_ADDR": "localhost:8080"}, false, "", false},
		{"every interface: TLS", map[string]string{"CAIRN_API_ADDR": ":8080"}, true, "", false},
		{"0.0.0.0: TLS", map[string]string{"CAIRN_API_ADDR": "0.0.0.0:8080"}, true, "", false},
		{"an address: TLS", map[string]string{"CAIRN_API_ADDR": "10.0.0.5:8080"}, true, "", false},
		{"loopback asked for TLS", map[string]string{"CAIRN_API_ADDR": "127.0.0.1:8080", "CAIRN_API_TLS": "true"}, true, "", false},
		{"loopback with a certificate", map[string]string{"CAIRN_API_ADDR": "127.0.0.1:8080", "CAIRN_API_TLS_CERT": certFile, "CAIRN_API_TLS_KEY": keyFile}, true, "", true},
		{"beyond loopback with a certificate", map[string]string{"CAIRN_API_ADDR": "0.0.0.0:8080", "CAIRN_API_TLS_CERT": certFile, "CAIRN_API_TLS_KEY": keyFile}, true, "", true},
		{"beyond loopback, TLS off", map[string]string{"CAIRN_API_ADDR": "0.0.0.0:8080", "CAIRN_API_TLS": "false"}, false, "refusing to serve the API over plain HTTP", false},
		{"beyond loopback, TLS off, insecure allowed", map[string]string{"CAIRN_API_ADDR": "0.0.0.0:8080", "CAIRN_API_TLS": "false", "CAIRN_INSECURE_HTTP": "true"}, false, "", false},
		{"beyond loopback, insecure allowed", map[string]string{"CAIRN_API_ADDR": "0.0.0.0:8080", "CAIRN_INSECURE_HTTP": "true"}, false, "", false},
		{"loopback, TLS off", map[string]string{"CAIRN_API_ADDR": "127.0.0.1:8080", "CAIRN_API_TLS": "false"}, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			vals := map[string]string{"CAIRN_DATA_DIR": dir}
			for k, v := range tt.vals {
				vals[k] = v
			}
			cfg, err := config.Load(config.Values(func(k string) string { return vals[k] }))
			require.NoError(t, err)
			tc, fp, err := apiTLS(cfg, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantTLS, tc != nil)
			_, statErr := os.Stat(filepath.Join(dir, "tls", "api-cert.pem"))
			if !tt.wantTLS {
				assert.Empty(t, fp)
				assert.True(t, os.IsNotExist(statErr), "a certificate was made for plain HTTP")
				return
			}
			leaf, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0])
			require.NoError(t, err)
			if tt.ownCert {
				assert.Equal(t, "cairn.test", leaf.Subject.CommonName)
				assert.True(t, os.IsNotExist(statErr))
			} else {
				assert.Equal(t, "cairn API", leaf.Subject.CommonName)
				assert.NoError(t, statErr, "the self-signed certificate is not kept in the data dir")
			}
			assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, fp)
		})
	}
}
