package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/cairn-io/cairn/internal/apitls"
	"github.com/cairn-io/cairn/internal/config"
)

// apiTLS is the TLS configuration the API is served with (nil: plain
// HTTP) and its certificate's fingerprint. The API is served over TLS
// beyond loopback unless CAIRN_INSECURE_HTTP says otherwise, and
// wherever CAIRN_API_TLS=true or a certificate is given; without the
// operator's certificate, a self-signed one is made once and kept in the
// data dir, so its fingerprint, which agents pin, survives restarts.
// Plain HTTP beyond loopback without CAIRN_INSECURE_HTTP is an error.
func apiTLS(cfg *config.Config, log *slog.Logger) (*tls.Config, string, error) {
	host, _, err := net.SplitHostPort(cfg.APIAddr)
	if err != nil {
		return nil, "", fmt.Errorf("CAIRN_API_ADDR %q: %w", cfg.APIAddr, err)
	}
	t := cfg.APITLS
	loopback := apitls.IsLoopback(host)
	on := t.Mode == "true" || t.Mode == "auto" && (t.CertFile != "" || !loopback && !t.InsecureHTTP)
	if !on {
		if !loopback {
			if !t.InsecureHTTP {
				return nil, "", fmt.Errorf("refusing to serve the API over plain HTTP on %s, beyond loopback: node tokens, API tokens and step data would travel in clear; leave CAIRN_API_TLS=auto, or set CAIRN_INSECURE_HTTP=true on a network you trust", cfg.APIAddr)
			}
			log.Warn("API served over plain HTTP beyond loopback (CAIRN_INSECURE_HTTP=true): node tokens, API tokens and step data travel in clear", "addr", cfg.APIAddr)
		}
		return nil, "", nil
	}
	hosts := []string{host}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	cert, fp, err := apitls.ServerCertificate(t.CertFile, t.KeyFile, cfg.DataDir, hosts)
	if err != nil {
		return nil, "", err
	}
	return apitls.ServerConfig(cert), fp, nil
}
