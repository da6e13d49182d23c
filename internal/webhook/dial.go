package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrAddress marks a delivery refused for its receiver's address: no
// retry changes it.
var ErrAddress = errors.New("webhook address refused")

// sharedAddressSpace is 100.64.0.0/10 (RFC 6598, carrier-grade NAT), not
// routed on the internet either.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// privateAddr says why a webhook may not be delivered to ip by default
// ("" when it may): loopback, private, link-local (cloud metadata services
// among them), unspecified, multicast and shared addresses reach the
// control plane's own network, not a receiver on the internet.
func privateAddr(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	case sharedAddressSpace.Contains(ip):
		return "a shared (carrier-grade NAT) address"
	}
	return ""
}

// dialControl refuses a connection to a private address (see
// privateAddr) with ErrAddress. It runs on the address being dialled,
// after name resolution, so a name that resolves to such an address (DNS
// rebinding included) is refused just like the literal address.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook address %q: %w", address, err)
	}
	if why := privateAddr(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s is %s (set CAIRN_HOOKS_ALLOW_PRIVATE=true to allow it)", ErrAddress, ap.Addr(), why)
	}
	return nil
}

// NewClient is the HTTP client of deliveries: no proxy (the address
// checked is the receiver's), no redirects, Timeout on each attempt, and
// unless allowPrivate no connection to a private address (the request
// then fails with ErrAddress).
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: Timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = dialControl
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   Timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     t,
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
