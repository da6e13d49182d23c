package agentapi

import (
	"crypto/tls"
	"net/http"
	"time"
)

// NewHTTPClient is the HTTP client NewClient uses by default (a 2-minute
// timeout, idle connections closed after IdleConnTimeout, requests given
// up on never delivered: fenceTransport) with tlsConfig for https://
// servers (nil: the system's roots).
func NewHTTPClient(tlsConfig *tls.Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.IdleConnTimeout = IdleConnTimeout
	if tlsConfig != nil {
		tr.TLSClientConfig = tlsConfig
	}
	fenceTransport(tr)
	return &http.Client{Timeout: 2 * time.Minute, Transport: tr}
}
