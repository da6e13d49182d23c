package temporalclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/cairn-io/cairn/internal/config"
)

// maxPEM bounds what a CA, certificate, key or API key file may hold.
const maxPEM = 1 << 20

// tlsConfig is the TLS configuration the settings ask for, or nil for
// plain text. TLS is on when asked, or, unless asked off, when any TLS
// setting or an API key is given (an API key is a bearer credential: it
// must not cross the network in clear by default).
func tlsConfig(sec config.TemporalSecurity, log *slog.Logger) (*tls.Config, error) {
	if (sec.CertFile == "") != (sec.KeyFile == "") {
		if sec.CertFile == "" {
			return nil, errors.New("CAIRN_TEMPORAL_TLS_KEY is set without CAIRN_TEMPORAL_TLS_CERT: a client key needs its certificate")
		}
		return nil, errors.New("CAIRN_TEMPORAL_TLS_CERT is set without CAIRN_TEMPORAL_TLS_KEY: a client certificate needs its key")
	}
	tlsFiles := sec.CAFile != "" || sec.CertFile != "" || sec.ServerName != ""
	if sec.TLS != nil && !*sec.TLS {
		if tlsFiles {
			return nil, errors.New("CAIRN_TEMPORAL_TLS is false, but CAIRN_TEMPORAL_TLS_CA, _CERT, _KEY or _SERVER_NAME is set: unset them or turn TLS on")
		}
		return nil, nil
	}
	if sec.TLS == nil && !tlsFiles && sec.APIKey == "" && sec.APIKeyFile == "" {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: sec.ServerName}
	if sec.CAFile != "" {
		pem, err := readBounded(sec.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CAIRN_TEMPORAL_TLS_CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CAIRN_TEMPORAL_TLS_CA: %s holds no PEM certificate", sec.CAFile)
		}
		t.RootCAs = pool
	}
	if sec.CertFile != "" {
		kp := &keyPair{certFile: sec.CertFile, keyFile: sec.KeyFile, log: log}
		if err := kp.load(); err != nil {
			return nil, err
		}
		t.GetClientCertificate = kp.get
	}
	return t, nil
}

// apiKey is the API key the settings give, from the setting or its file.
func apiKey(sec config.TemporalSecurity) (string, error) {
	if sec.APIKeyFile == "" {
		if strings.TrimSpace(sec.APIKey) != sec.APIKey {
			return "", errors.New("CAIRN_TEMPORAL_API_KEY has leading or trailing white space")
		}
		return sec.APIKey, nil
	}
	if sec.APIKey != "" {
		return "", errors.New("CAIRN_TEMPORAL_API_KEY and CAIRN_TEMPORAL_API_KEY_FILE are both set: set one")
	}
	b, err := readBounded(sec.APIKeyFile)
	if err != nil {
		return "", fmt.Errorf("CAIRN_TEMPORAL_API_KEY_FILE: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" || strings.ContainsAny(key, "\r\n") {
		return "", fmt.Errorf("CAIRN_TEMPORAL_API_KEY_FILE: %s must hold one non-empty line", sec.APIKeyFile)
	}
	return key, nil
}

// readBounded reads a file of at most maxPEM bytes.
func readBounded(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxPEM)
	}
	return b, nil
}
