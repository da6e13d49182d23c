package api

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// DefaultCodecOrigins are the Temporal UI's origins when the dev server
// serves it (`cairn dev`, `temporal server start-dev`).
var DefaultCodecOrigins = []string{"http://127.0.0.1:8233", "http://localhost:8233"}

// origin is a browser origin reduced to what comparisons need: the scheme
// and host:port in lower case, with the scheme's default port written out.
type origin struct {
	scheme string
	host   string // host:port, IPv6 in brackets
}

func (o origin) String() string { return o.scheme + "://" + o.host }

// parseOrigin reads an Origin header or a configured origin:
// scheme://host[:port] with scheme http or https and nothing after the
// authority. "null" (sandboxed frames, file://) is not an origin.
func parseOrigin(s string) (origin, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return origin{}, fmt.Errorf("origin %q: %w", s, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return origin{}, fmt.Errorf("origin %q: want http://host[:port] or https://host[:port]", s)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return origin{}, fmt.Errorf("origin %q: want scheme://host[:port] and nothing else", s)
	}
	return origin{scheme: scheme, host: withPort(u.Host, scheme)}, nil
}

// parseOrigins reads configured origins, refusing any that is malformed.
func parseOrigins(list []string) (map[origin]bool, error) {
	out := make(map[origin]bool, len(list))
	for _, s := range list {
		if strings.TrimSpace(s) == "" {
			continue
		}
		o, err := parseOrigin(s)
		if err != nil {
			return nil, err
		}
		out[o] = true
	}
	return out, nil
}

// withPort lower-cases host and adds the scheme's default port when it has
// none, so "http://LOCALHOST" and "localhost:80" compare equal.
func withPort(host, scheme string) string {
	host = strings.ToLower(host)
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// sameOrigin reports whether o names the host the request was sent to: the
// Origin a browser sends for a page served by this server itself. The
// scheme is not compared, so a TLS-terminating proxy in front keeps
// working; the Host check (without a token) and the token (with one) are
// what stop DNS rebinding, where Origin and Host are both the attacker's.
func sameOrigin(o origin, requestHost string) bool {
	return requestHost != "" && o.host == withPort(requestHost, o.scheme)
}

// loopbackHost reports whether a Host header names this machine's loopback
// interface: 127.0.0.0/8, ::1 or localhost, with any port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return host != "" && isLoopback(host)
}
