package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"

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
	envInsecureHTTP      = "CAIRN_INSECURE_HTTP"
)

// tlsClientOption is the HTTP client of the client verbs for server:
// with $CAIRN_SERVER_FINGERPRINT or $CAIRN_SERVER_CA set, the server's
// certificate is pinned or checked against that CA; otherwise nil (the
// default client, the system's roots). An http:// server beyond
// loopback is refused unless $CAIRN_INSECURE_HTTP is true: the API
// token, packages and secrets would travel in clear.
func tlsClientOption(server string) (client.Option, error) {
	fp, ca := os.Getenv(envServerFingerprint), os.Getenv(envServerCA)
	insecure := false
	if v := os.Getenv(envInsecureHTTP); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", envInsecureHTTP, v)
		}
		insecure = b
	}
	tc, err := apitls.ClientConfig(server, apitls.ClientOptions{Fingerprint: fp, CAFile: ca, AllowPlainHTTP: insecure})
	if err != nil {
		return nil, err
	}
	if fp == "" && ca == "" {
		return nil, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return client.WithHTTPClient(&http.Client{Transport: tr}), nil
}
