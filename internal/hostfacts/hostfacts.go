// Package hostfacts reads the facts an agent reports of its host when it
// starts (model.NodeFacts): names, interface addresses, os-release, the
// kernel, processors, memory and the boot id. It reads files and asks
// the kernel; it runs nothing.
package hostfacts

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-io/cairn/model"
)

// Sources say where the facts are read from; the zero value reads the
// running host's.
type Sources struct {
	// Root prefixes the files read (/etc/os-release, /proc/...): "" is /.
	Root string
	// Hostname, Interfaces and LookupFQDN replace the host's when set.
	Hostname   func() (string, error)
	Interfaces func() ([]net.Addr, error)
	LookupFQDN func(ctx context.Context, host string) (string, error)
}

// Collect reads the facts. A fact it cannot read is left empty, so a
// container without /proc still reports the rest; values are cut to the
// bounds model.NodeFacts.Validate accepts. It takes at most the time of
// one DNS lookup of the hostname, bounded by 2 seconds.
func Collect(ctx context.Context, src Sources) *model.NodeFacts {
	f := &model.NodeFacts{CPUs: runtime.NumCPU()}
	hostname := src.Hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	if h, err := hostname(); err == nil {
		f.Hostname = cutName(h)
	}
	if f.Hostname == "" {
		f.Hostname = "localhost"
	}
	f.FQDN = fqdn(ctx, src, f.Hostname)
	ifaces := src.Interfaces
	if ifaces == nil {
		ifaces = net.InterfaceAddrs
	}
	if addrs, err := ifaces(); err == nil {
		f.Addresses = addresses(addrs)
	}
	f.OS = osRelease(src.file("etc/os-release"), src.file("usr/lib/os-release"))
	f.OS.Kernel = cutText(readLine(src.file("proc/sys/kernel/osrelease")))
	f.OS.Arch = runtime.GOARCH
	f.MemoryBytes = memTotal(src.file("proc/meminfo"))
	if id := strings.ToLower(readLine(src.file("proc/sys/kernel/random/boot_id"))); len(id) <= 64 && strings.Trim(id, "0123456789abcdef-") == "" {
		f.BootID = id
	}
	f.AgentVersion = cutText(version())
	return f
}

func (s Sources) file(rel string) string {
	root := s.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, rel)
}

// fqdn is the canonical name the resolver gives the hostname, when it
// is a dotted name other than the hostname itself.
func fqdn(ctx context.Context, src Sources, host string) string {
	lookup := src.LookupFQDN
	if lookup == nil {
		lookup = net.DefaultResolver.LookupCNAME
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	name, err := lookup(ctx, host)
	if err != nil {
		return ""
	}
	name = cutName(strings.TrimSuffix(name, "."))
	if name == host || !strings.Contains(name, ".") {
		return ""
	}
	return name
}

// maxAddresses is model.NodeFacts' bound.
const maxAddresses = 64

// addresses keeps the interface addresses other than loopback and
// link-local ones, in CIDR form.
func addresses(addrs []net.Addr) []string {
	var out []string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || n.IP.IsLinkLocalMulticast() {
			continue
		}
		if len(out) == maxAddresses {
			break
		}
		out = append(out, n.String())
	}
	return out
}

// osRelease reads ID, NAME, VERSION and VERSION_ID from the first
// os-release file that exists.
func osRelease(paths ...string) model.OSFacts {
	var o model.OSFacts
	for _, p := range paths {
		data, err := readBounded(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
			if !ok {
				continue
			}
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			} else {
				v = strings.Trim(v, `"'`)
			}
			switch k {
			case "ID":
				o.ID = cutText(v)
			case "NAME":
				o.Name = cutText(v)
			case "VERSION":
				o.Version = cutText(v)
			case "VERSION_ID":
				o.VersionID = cutText(v)
			}
		}
		return o
	}
	return o
}

// memTotal is /proc/meminfo's MemTotal in bytes, 0 when unknown.
func memTotal(path string) int64 {
	data, err := readBounded(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 {
			return 0
		}
		return kb * 1024
	}
	return 0
}

// readBounded reads at most 64 KiB of a file.
func readBounded(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(io.LimitReader(fh, 64<<10))
}

func readLine(path string) string {
	data, err := readBounded(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

// cutText keeps the printable part of s, at most 128 bytes.
func cutText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	for len(s) > 128 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// cutName keeps a host name's allowed characters, at most 253 bytes.
func cutName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, s)
	if len(s) > 253 {
		s = s[:253]
	}
	return s
}

// version is the main module's version, or its VCS revision.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return s.Value[:12]
		}
	}
	return ""
}
