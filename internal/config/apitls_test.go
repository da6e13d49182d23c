package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadAPITLS(t *testing.T) {
	tests := []struct {
		name    string
		vals    map[string]string
		want    APITLS
		wantErr string
	}{
		{"defaults", nil, APITLS{Mode: "auto"}, ""},
		{"forced on", map[string]string{"CAIRN_API_TLS": "TRUE"}, APITLS{Mode: "true"}, ""},
		{"off and insecure", map[string]string{"CAIRN_API_TLS": "false", "CAIRN_INSECURE_HTTP": "true"}, APITLS{Mode: "false", InsecureHTTP: true}, ""},
		{"agent pin and CA", map[string]string{"CAIRN_SERVER_FINGERPRINT": " sha256:ab ", "CAIRN_SERVER_CA": "/etc/cairn/ca.pem"},
			APITLS{Mode: "auto", ServerFingerprint: "sha256:ab", ServerCA: "/etc/cairn/ca.pem"}, ""},
		{"certificate and key", map[string]string{"CAIRN_API_TLS_CERT": "c.pem", "CAIRN_API_TLS_KEY": "k.pem"}, APITLS{Mode: "auto", CertFile: "c.pem", KeyFile: "k.pem"}, ""},
		{"a bad mode", map[string]string{"CAIRN_API_TLS": "maybe"}, APITLS{}, "CAIRN_API_TLS: want auto, true or false"},
		{"a certificate without its key", map[string]string{"CAIRN_API_TLS_CERT": "c.pem"}, APITLS{}, "go together"},
		{"a bad insecure flag", map[string]string{"CAIRN_INSECURE_HTTP": "sure"}, APITLS{}, "CAIRN_INSECURE_HTTP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(Values(func(k string) string { return tt.vals[k] }))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.APITLS)
		})
	}
}
