package api

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// CheckListen refuses to serve the API beyond the loopback interface without
// a token: anyone who can reach it could otherwise run commands on every
// node. addr is host:port; an empty host (":8080") means every interface.
func CheckListen(addr string, auth bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if auth || isLoopback(host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "all interfaces"
	}
	return fmt.Errorf("refusing to listen on %s (%s) without an API token: set CAIRN_API_TOKEN (or CAIRN_API_TOKENS) or listen on 127.0.0.1", addr, shown)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false
	}
	return ip.IsLoopback()
}
