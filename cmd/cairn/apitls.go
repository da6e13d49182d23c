package main

import (
	"net/http"
	"os"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/apitls"
)

// apiTLSServerSettings are how `cairn server` serves its API over TLS.
var apiTLSServerSettings = []string{"CAIRN_API_TLS", "CAIRN_API_TLS_CERT", "CAIRN_API_TLS_KEY", "CAIRN_INSECURE_HTTP"}

// apiTLSAgentSettings are how `cairn agent` trusts the server's API.
var apiTLSAgentSettings = []string{"CAIRN_SERVER_FINGERPRINT", "CAIRN_SERVER_CA", "CAIRN_INSECURE_HTTP"}

// Environment variables the client verbs trust an https:// server with.
const (
	envServerFingerprint = "CAIRN_SERVER_FINGERPRINT"
	envServerCA          = "CAIRN_SERVER_CA"
)

// tlsClientOption is the HTTP client of the client verbs for server:
// with $CAIRN_SERVER_FINGERPRINT or $CAIRN_SERVER_CA set, the server's
// certificate is pinned or checked against that CA; otherwise nil (the
// default client, the system's roots).
func tlsClientOption(server string) (client.Option, error) {
	fp, ca := os.Getenv(envServerFingerprint), os.Getenv(envServerCA)
	if fp == "" && ca == "" {
		return nil, nil
	}
	tc, err := apitls.ClientConfig(server, apitls.ClientOptions{Fingerprint: fp, CAFile: ca, AllowPlainHTTP: true})
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return client.WithHTTPClient(&http.Client{Transport: tr}), nil
}
