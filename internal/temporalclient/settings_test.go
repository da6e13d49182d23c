package temporalclient_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/temporalclient"
	"github.com/cairn-io/cairn/internal/testenv"
)

func TestBadSettingsFailNamingTheSetting(t *testing.T) {
	dir := t.TempDir()
	ca := testenv.NewCA(t, "ca")
	caFile := testenv.WriteFile(t, dir, "ca.pem", ca.PEM)
	cert, key := ca.Client(t, "c")
	certFile := testenv.WriteFile(t, dir, "c.pem", cert)
	keyFile := testenv.WriteFile(t, dir, "k.pem", key)
	_, otherKey := ca.Client(t, "d")
	otherKeyFile := testenv.WriteFile(t, dir, "other-k.pem", otherKey)
	notPEM := testenv.WriteFile(t, dir, "not.pem", []byte("hello"))
	off := false
	missing := filepath.Join(dir, "missing.pem")

	for name, tc := range map[string]struct {
		sec  config.TemporalSecurity
		want string
	}{
		"cert without key":      {config.TemporalSecurity{CertFile: certFile}, "CAIRN_TEMPORAL_TLS_CERT is set without CAIRN_TEMPORAL_TLS_KEY"},
		"key without cert":      {config.TemporalSecurity{KeyFile: keyFile}, "CAIRN_TEMPORAL_TLS_KEY is set without CAIRN_TEMPORAL_TLS_CERT"},
		"unreadable CA":         {config.TemporalSecurity{CAFile: missing}, "CAIRN_TEMPORAL_TLS_CA: open " + missing},
		"CA without PEM":        {config.TemporalSecurity{CAFile: notPEM}, "CAIRN_TEMPORAL_TLS_CA: " + notPEM + " holds no PEM certificate"},
		"missing cert":          {config.TemporalSecurity{CertFile: missing, KeyFile: keyFile}, "CAIRN_TEMPORAL_TLS_CERT: stat " + missing},
		"missing key":           {config.TemporalSecurity{CertFile: certFile, KeyFile: missing}, "CAIRN_TEMPORAL_TLS_KEY: stat " + missing},
		"key of another cert":   {config.TemporalSecurity{CertFile: certFile, KeyFile: otherKeyFile}, "CAIRN_TEMPORAL_TLS_CERT and CAIRN_TEMPORAL_TLS_KEY"},
		"TLS off with files":    {config.TemporalSecurity{TLS: &off, CAFile: caFile}, "CAIRN_TEMPORAL_TLS is false"},
		"two API keys":          {config.TemporalSecurity{APIKey: "tk_secret", APIKeyFile: caFile}, "CAIRN_TEMPORAL_API_KEY and CAIRN_TEMPORAL_API_KEY_FILE are both set"},
		"unreadable API key":    {config.TemporalSecurity{APIKeyFile: missing}, "CAIRN_TEMPORAL_API_KEY_FILE: open " + missing},
		"API key file of lines": {config.TemporalSecurity{APIKeyFile: caFile}, "CAIRN_TEMPORAL_API_KEY_FILE: " + caFile + " must hold one non-empty line"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := temporalclient.Options(&config.Config{TemporalAddress: "127.0.0.1:7233", Temporal: tc.sec}, temporalclient.Params{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.sec.APIKey != "" {
				assert.NotContains(t, err.Error(), tc.sec.APIKey)
			}
		})
	}
}

func TestTLSIsOnWhenAskedOrImplied(t *testing.T) {
	dir := t.TempDir()
	caFile := testenv.WriteFile(t, dir, "ca.pem", testenv.NewCA(t, "ca").PEM)
	on, off := true, false
	for name, tc := range map[string]struct {
		sec         config.TemporalSecurity
		tls, noTLS  bool
		credentials bool
	}{
		"nothing":                {sec: config.TemporalSecurity{}},
		"asked":                  {sec: config.TemporalSecurity{TLS: &on}, tls: true},
		"CA":                     {sec: config.TemporalSecurity{CAFile: caFile}, tls: true},
		"server name":            {sec: config.TemporalSecurity{ServerName: "temporal.example"}, tls: true},
		"API key":                {sec: config.TemporalSecurity{APIKey: "k"}, tls: true, credentials: true},
		"API key, TLS asked off": {sec: config.TemporalSecurity{APIKey: "k", TLS: &off}, noTLS: true, credentials: true},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := temporalclient.Options(&config.Config{TemporalAddress: "127.0.0.1:7233", Temporal: tc.sec}, temporalclient.Params{})
			require.NoError(t, err)
			assert.Equal(t, tc.tls, o.ConnectionOptions.TLS != nil, "TLS")
			assert.Equal(t, tc.noTLS, o.ConnectionOptions.TLSDisabled, "TLSDisabled")
			assert.Equal(t, tc.credentials, o.Credentials != nil, "credentials")
			if tc.sec.ServerName != "" {
				assert.Equal(t, tc.sec.ServerName, o.ConnectionOptions.TLS.ServerName)
			}
		})
	}
}
