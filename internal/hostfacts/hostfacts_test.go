package hostfacts

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func cidr(s string) net.Addr {
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	n.IP = ip
	return n
}

// Facts come from the files and calls a host answers, cut to what the
// server accepts: the report of a hostile or odd host still validates.
func TestCollectFromSources(t *testing.T) {
	root := t.TempDir()
	write(t, root, "etc/os-release", "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nID=debian\nPRETTY_NAME=\"ignored\"\n")
	write(t, root, "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
	write(t, root, "proc/meminfo", "MemTotal:        8029876 kB\nMemFree:  1 kB\n")
	write(t, root, "proc/sys/kernel/random/boot_id", "B920BB6E-98F5-4E5D-8A5D-EF1F1E34E743\n")
	f := Collect(context.Background(), Sources{
		Root:     root,
		Hostname: func() (string, error) { return "web-1", nil },
		Interfaces: func() ([]net.Addr, error) {
			return []net.Addr{cidr("127.0.0.1/8"), cidr("10.20.0.5/24"), cidr("fe80::1/64"), cidr("2001:db8::5/64"), cidr("::1/128")}, nil
		},
		LookupFQDN: func(context.Context, string) (string, error) { return "web-1.example.com.", nil },
	})
	assert.Equal(t, "web-1", f.Hostname)
	assert.Equal(t, "web-1.example.com", f.FQDN)
	assert.Equal(t, []string{"10.20.0.5/24", "2001:db8::5/64"}, f.Addresses)
	assert.Equal(t, "debian", f.OS.ID)
	assert.Equal(t, "Debian GNU/Linux", f.OS.Name)
	assert.Equal(t, "12 (bookworm)", f.OS.Version)
	assert.Equal(t, "12", f.OS.VersionID)
	assert.Equal(t, "6.1.0-18-amd64", f.OS.Kernel)
	assert.Equal(t, runtime.GOARCH, f.OS.Arch)
	assert.Equal(t, int64(8029876*1024), f.MemoryBytes)
	assert.Equal(t, "b920bb6e-98f5-4e5d-8a5d-ef1f1e34e743", f.BootID)
	assert.Equal(t, runtime.NumCPU(), f.CPUs)
	require.NoError(t, f.Validate())
}

func TestCollectCutsWhatTheServerWouldRefuse(t *testing.T) {
	root := t.TempDir()
	write(t, root, "usr/lib/os-release", "ID=evil\nNAME=\"bad\x1b[31mname"+strings.Repeat("x", 300)+"\"\n")
	write(t, root, "proc/sys/kernel/random/boot_id", "not a uuid; rm -rf /\n")
	write(t, root, "proc/meminfo", "MemTotal: lots kB\n")
	many := make([]net.Addr, 100)
	for i := range many {
		many[i] = cidr("10.0.0.1/8")
	}
	f := Collect(context.Background(), Sources{
		Root:       root,
		Hostname:   func() (string, error) { return "we b\n1" + strings.Repeat("a", 300), nil },
		Interfaces: func() ([]net.Addr, error) { return many, nil },
		LookupFQDN: func(context.Context, string) (string, error) { return "", errors.New("no DNS") },
	})
	require.NoError(t, f.Validate(), "%+v", f)
	assert.Equal(t, "evil", f.OS.ID, "os-release from /usr/lib when /etc has none")
	assert.NotContains(t, f.OS.Name, "\x1b")
	assert.LessOrEqual(t, len(f.OS.Name), 128)
	assert.Empty(t, f.BootID)
	assert.Zero(t, f.MemoryBytes)
	assert.Len(t, f.Addresses, 64)
	assert.Empty(t, f.FQDN)
	assert.True(t, strings.HasPrefix(f.Hostname, "web1"), f.Hostname)
}

// On this host: the facts the agent reports are this host's.
func TestCollectThisHost(t *testing.T) {
	f := Collect(context.Background(), Sources{})
	require.NoError(t, f.Validate(), "%+v", f)
	host, err := os.Hostname()
	require.NoError(t, err)
	assert.Equal(t, host, f.Hostname)
	assert.Equal(t, runtime.NumCPU(), f.CPUs)
	if runtime.GOOS == "linux" {
		assert.Positive(t, f.MemoryBytes)
		assert.Regexp(t, `^[0-9a-f-]{36}$`, f.BootID)
		assert.NotEmpty(t, f.OS.Kernel)
	}
}
