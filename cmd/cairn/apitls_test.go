package main

import (
	"strings"
	"testing"
)

// TestClientRefusesPlainHTTPBeyondLoopback: a client verb does not send
// its token over plain HTTP to a host beyond loopback unless
// CAIRN_INSECURE_HTTP=true says the network is trusted. 0.0.0.0 is not
// a loopback address, yet a connection to it reaches this host's
// listeners, so the same server answers once it is allowed.
func TestClientRefusesPlainHTTPBeyondLoopback(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{token: "t0ken"})
	s.stack("web")
	wide := strings.Replace(s.url, "127.0.0.1", "0.0.0.0", 1)

	tests := []struct {
		name     string
		insecure string
		code     int
		stdout   string
		stderr   string
	}{
		{"refused by default", "", 1, "", "refusing plain HTTP to 0.0.0.0"},
		{"refused when false", "false", 1, "", "refusing plain HTTP"},
		{"allowed on a trusted network", "true", 0, "web", ""},
		{"a malformed setting", "maybe", 1, "", "CAIRN_INSECURE_HTTP=\"maybe\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envInsecureHTTP, tt.insecure)
			r := runCairn(t, "stack", "list", "--server", wide, "--token", "t0ken").expect(t, tt.code)
			if tt.stdout != "" {
				r.has(t, tt.stdout)
			}
			if tt.stderr != "" {
				r.hasErr(t, tt.stderr)
			}
		})
	}
}
