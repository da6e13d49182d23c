package partition

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// network is a bridge in the test's own network namespace, with an
// address (Addr) the Temporal dev server and the Cairn server listen on,
// and the hosts plugged into it.
type network struct {
	t      *testing.T
	id     string // unique part of every name
	bridge string
	prefix string // first three octets of the /24
	Addr   string // the bridge's address: the servers' host
	mu     sync.Mutex
	hosts  int
}

// host is an agent's machine: a network namespace holding one end of a
// veth pair (Addr), the other end a port of the bridge (link).
type host struct {
	t    *testing.T
	Name string // namespace
	Addr string
	link string // the bridge's end: down cuts the host off
}

// requireNetns checks the test can make namespaces: root and iproute2. On
// a developer's machine without them the test skips with the reason,
// unless CAIRN_REQUIRE_ALL is set (CI), where it fails.
func requireNetns(t *testing.T) {
	t.Helper()
	var why string
	_, err1 := exec.LookPath("ip")
	_, err2 := exec.LookPath("bridge")
	switch {
	case err1 != nil || err2 != nil:
		why = "iproute2's ip and bridge are not installed"
	case os.Geteuid() != 0:
		why = "network namespaces need root"
	}
	if why == "" {
		return
	}
	if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
		t.Fatalf("network namespaces are required here (CAIRN_REQUIRE_ALL is set): %s", why)
	}
	t.Skip(why)
}

// ip runs `ip args...` and fails the test on an error.
func ip(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
}

// ipQuiet runs `ip args...` for cleanup, ignoring errors.
func ipQuiet(args ...string) { _ = exec.Command("ip", args...).Run() }

// newNetwork makes the bridge, on a /24 of 10.0.0.0/8 no route of this
// machine covers, and removes it, with every host, when the test ends,
// failed or not.
func newNetwork(t *testing.T) *network {
	t.Helper()
	requireNetns(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	n := &network{t: t, id: hex.EncodeToString(b)[:5]}
	n.bridge = "cpb" + n.id
	for range 20 {
		x, _ := rand.Int(rand.Reader, big.NewInt(200))
		y, _ := rand.Int(rand.Reader, big.NewInt(250))
		prefix := fmt.Sprintf("10.%d.%d", 40+x.Int64(), 1+y.Int64())
		if !routed(prefix + ".1") {
			n.prefix = prefix
			break
		}
	}
	require.NotEmpty(t, n.prefix, "no free 10.x.y.0/24 for the test's network")
	n.Addr = n.prefix + ".1"
	ip(t, "link", "add", n.bridge, "type", "bridge")
	t.Cleanup(func() { ipQuiet("link", "del", n.bridge) })
	// A bridge takes the lowest address of its ports unless given one:
	// its address would change as hosts' links go down and up, and the
	// hosts would send to an address it no longer has.
	mac := make([]byte, 5)
	_, _ = rand.Read(mac)
	ip(t, "link", "set", n.bridge, "address", fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4]))
	ip(t, "addr", "add", n.Addr+"/24", "dev", n.bridge)
	ip(t, "link", "set", n.bridge, "up")
	return n
}

// routed reports whether an interface of this machine already holds an
// address of addr's /24.
func routed(addr string) bool {
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	want := net.ParseIP(addr)
	for _, a := range ifaces {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.Mask(net.CIDRMask(24, 32)).Equal(want.Mask(net.CIDRMask(24, 32))) {
			return true
		}
	}
	return false
}

// addHost makes a namespace plugged into the bridge, with the next
// address of the /24, and removes it when the test ends.
func (n *network) addHost(t *testing.T, label string) *host {
	t.Helper()
	n.mu.Lock()
	n.hosts++
	i := n.hosts
	n.mu.Unlock()
	h := &host{t: t, Name: fmt.Sprintf("cairnpt-%s-%s", n.id, label), Addr: fmt.Sprintf("%s.%d", n.prefix, i+1),
		link: fmt.Sprintf("cph%s%d", n.id, i)}
	peer := fmt.Sprintf("cpa%s%d", n.id, i)
	ip(t, "netns", "add", h.Name)
	t.Cleanup(func() { ipQuiet("netns", "del", h.Name) })
	ip(t, "link", "add", h.link, "type", "veth", "peer", "name", peer, "netns", h.Name)
	t.Cleanup(func() { ipQuiet("link", "del", h.link) })
	ip(t, "link", "set", h.link, "master", n.bridge)
	ip(t, "link", "set", h.link, "up")
	ip(t, "-n", h.Name, "addr", "add", h.Addr+"/24", "dev", peer)
	ip(t, "-n", h.Name, "link", "set", peer, "up")
	ip(t, "-n", h.Name, "link", "set", "lo", "up")
	return h
}

// cut drops everything the host sends and everything sent to it: its
// bridge port stops forwarding (port state disabled). Its link stays up
// and its neighbour entries stay valid, as when a switch or a firewall
// between the host and the servers drops its traffic; its connections
// stay open on both ends. (Taking the link down instead would flush the
// host's neighbour entries, and the kernel would hold what TCP sent in
// the neighbour's queue while it resolves the address again, to deliver it
// on the heal: not what a partition does.)
func (h *host) cut() { bridgeCmd(h.t, "link", "set", "dev", h.link, "state", "0") }

// heal has the host's bridge port forward again.
func (h *host) heal() { bridgeCmd(h.t, "link", "set", "dev", h.link, "state", "3") }

// bridgeCmd runs iproute2's `bridge args...` and fails the test on an
// error.
func bridgeCmd(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("bridge", args...).CombinedOutput()
	require.NoError(t, err, "bridge %s: %s", strings.Join(args, " "), out)
}

// command is name args run inside the host's namespace.
func (h *host) command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.Name, name}, args...)...)
}
