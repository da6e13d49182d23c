package config

import (
	"fmt"
	"strconv"
	"strings"
)

// APITLS is how the HTTP API (and so the agent API) is served, and how
// the CLI and agents reach it. internal/apitls reads the files.
type APITLS struct {
	// Mode is "auto" (TLS beyond loopback, or when a certificate is
	// given), "true" (always) or "false" (never; beyond loopback only
	// with InsecureHTTP).
	Mode string
	// CertFile and KeyFile are the operator's certificate and key (PEM),
	// both or neither; without them the server makes a self-signed one
	// in its data dir.
	CertFile string
	KeyFile  string
	// InsecureHTTP allows plain HTTP beyond loopback: the server serves
	// without TLS, an agent connects without it.
	InsecureHTTP bool
	// ServerFingerprint (agent, CLI) pins the server's certificate;
	// ServerCA is a PEM file of the CAs that sign it.
	ServerFingerprint string
	ServerCA          string
}

// apiTLSVars are the settings of APITLS, in the table Vars.
var apiTLSVars = []Var{
	{"CAIRN_API_TLS", "api-tls", "auto", "serve the API over TLS: auto (beyond loopback, or when a certificate is given), true or false"},
	{"CAIRN_API_TLS_CERT", "api-tls-cert", "", "PEM certificate the API is served with (default: a self-signed one made once in the data dir, pinned by agents)"},
	{"CAIRN_API_TLS_KEY", "api-tls-key", "", "PEM private key of CAIRN_API_TLS_CERT"},
	{"CAIRN_INSECURE_HTTP", "insecure-http", "false", "true allows plain HTTP beyond loopback (server, agent and client verbs): node and API tokens, step data and secrets then travel in clear"},
	{"CAIRN_SERVER_FINGERPRINT", "server-fingerprint", "", "CLI and agent: SHA-256 fingerprint of the API's certificate to pin (sha256:<hex>, as `cairn node token` prints it)"},
	{"CAIRN_SERVER_CA", "server-ca", "", "CLI and agent: PEM file of the CAs that sign the API's certificate (default: the system's)"},
}

func loadAPITLS(vals map[string]string) (APITLS, error) {
	t := APITLS{
		Mode:              strings.ToLower(strings.TrimSpace(vals["CAIRN_API_TLS"])),
		CertFile:          vals["CAIRN_API_TLS_CERT"],
		KeyFile:           vals["CAIRN_API_TLS_KEY"],
		ServerFingerprint: strings.TrimSpace(vals["CAIRN_SERVER_FINGERPRINT"]),
		ServerCA:          vals["CAIRN_SERVER_CA"],
	}
	switch t.Mode {
	case "", "auto":
		t.Mode = "auto"
	case "true", "false":
	default:
		return t, fmt.Errorf("CAIRN_API_TLS: want auto, true or false, got %q", t.Mode)
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return t, fmt.Errorf("CAIRN_API_TLS_CERT and CAIRN_API_TLS_KEY go together")
	}
	var err error
	if v := strings.TrimSpace(vals["CAIRN_INSECURE_HTTP"]); v != "" {
		if t.InsecureHTTP, err = strconv.ParseBool(v); err != nil {
			return t, fmt.Errorf("CAIRN_INSECURE_HTTP: want true or false, got %q", v)
		}
	}
	return t, nil
}
