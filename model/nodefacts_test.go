package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validFacts() NodeFacts {
	return NodeFacts{Hostname: "web-1", FQDN: "web-1.example.com", Addresses: []string{"10.0.0.5/24", "2001:db8::5"},
		OS:   OSFacts{ID: "debian", Name: "Debian GNU/Linux", Version: "12 (bookworm)", VersionID: "12", Kernel: "6.1.0", Arch: "amd64"},
		CPUs: 4, MemoryBytes: 8 << 30, BootID: "B920BB6E-98F5-4E5D-8A5D-EF1F1E34E743", AgentVersion: "v0.2.0"}
}

func TestNodeFactsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(f *NodeFacts)
		want string
	}{
		{"valid", func(*NodeFacts) {}, ""},
		{"no hostname", func(f *NodeFacts) { f.Hostname = "" }, "hostname: required"},
		{"non-ASCII hostname", func(f *NodeFacts) { f.Hostname = "wéb" }, "hostname: want letters"},
		{"fqdn with a slash", func(f *NodeFacts) { f.FQDN = "a/b" }, "fqdn: want letters"},
		{"an address with a zone", func(f *NodeFacts) { f.Addresses = []string{"fe80::1%eth0"} }, "addresses[0]"},
		{"a hostname as address", func(f *NodeFacts) { f.Addresses = []string{"db.example.com"} }, "addresses[0]"},
		{"65 addresses", func(f *NodeFacts) { f.Addresses = make([]string, 65) }, "at most 64"},
		{"invalid UTF-8", func(f *NodeFacts) { f.OS.Name = "\xff" }, "os.name: printable"},
		{"a newline", func(f *NodeFacts) { f.OS.Kernel = "6.1\n" }, "os.kernel: printable"},
		{"129 bytes", func(f *NodeFacts) { f.AgentVersion = strings.Repeat("v", 129) }, "agentVersion: at most 128"},
		{"zero CPUs", func(f *NodeFacts) { f.CPUs = 0 }, "cpus"},
		{"too many CPUs", func(f *NodeFacts) { f.CPUs = 1 << 17 }, "cpus"},
		{"memory past a PiB", func(f *NodeFacts) { f.MemoryBytes = 1<<50 + 1 }, "memoryBytes"},
		{"boot id with spaces", func(f *NodeFacts) { f.BootID = "b920 bb6e" }, "bootId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFacts()
			tt.edit(&f)
			err := f.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, []string{"10.0.0.5/24", "2001:db8::5/128"}, f.Addresses, "addresses canonical")
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestNodeFactsMap(t *testing.T) {
	f := validFacts()
	require.NoError(t, f.Validate())
	m := f.Map()
	assert.Equal(t, "web-1", m["hostname"])
	assert.Equal(t, int64(4), m["cpus"])
	assert.Equal(t, map[string]any{"id": "debian", "name": "Debian GNU/Linux", "version": "12 (bookworm)", "versionId": "12", "kernel": "6.1.0", "arch": "amd64"}, m["os"])
	assert.Equal(t, []any{"10.0.0.5/24", "2001:db8::5/128"}, m["addresses"])
	f.FQDN, f.BootID = "", ""
	m = f.Map()
	assert.NotContains(t, m, "fqdn")
	assert.NotContains(t, m, "bootId")
}

// A report is a peer's JSON: whatever it is, decoding and validating
// neither panics nor lets through what Validate refuses, and what it
// accepts it accepts again.
func FuzzNodeFacts(f *testing.F) {
	good, _ := json.Marshal(validFacts())
	f.Add(good)
	f.Add([]byte(`{"hostname":"a","cpus":1,"addresses":["::ffff:10.0.0.1/200"]}`))
	f.Add([]byte(`{"hostname":"a","cpus":1,"os":{"name":"\u0000"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var nf NodeFacts
		if json.Unmarshal(data, &nf) != nil {
			return
		}
		if nf.Validate() != nil {
			return
		}
		_ = nf.Map()
		again, err := json.Marshal(nf)
		require.NoError(t, err)
		var nf2 NodeFacts
		require.NoError(t, json.Unmarshal(again, &nf2))
		require.NoError(t, nf2.Validate(), "a validated report no longer validates: %s", again)
		require.Equal(t, strings.Join(nf.Addresses, ","), strings.Join(nf2.Addresses, ","))
	})
}
