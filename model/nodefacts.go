package model

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// NodeFacts are what an agent reports of its host when it starts, as
// Fuel's nailgun-agent did: its names, addresses, operating system,
// processors, memory and boot id. They are the agent's claims: the server
// checks their shape and bounds (Validate), keeps them apart from the
// node's Attributes and never lets them override what the operator set.
// Conditions and placeholders read them as the node's "facts" attribute
// ($node.facts.hostname, $.facts.os.id), unless the operator's attributes
// say otherwise.
type NodeFacts struct {
	Hostname string `json:"hostname" yaml:"hostname"`
	// FQDN is the host's fully qualified name, when it resolves one.
	FQDN string `json:"fqdn,omitempty" yaml:"fqdn,omitempty"`
	// Addresses are the host's global and private interface addresses in
	// CIDR form ("10.20.0.5/24"), loopback and link-local ones left out.
	Addresses []string `json:"addresses,omitempty" yaml:"addresses,omitempty"`
	OS        OSFacts  `json:"os" yaml:"os"`
	CPUs      int      `json:"cpus" yaml:"cpus"`
	// MemoryBytes is the host's total memory.
	MemoryBytes int64 `json:"memoryBytes" yaml:"memoryBytes"`
	// BootID changes at every boot (/proc/sys/kernel/random/boot_id).
	BootID string `json:"bootId,omitempty" yaml:"bootId,omitempty"`
	// AgentVersion is the version of the cairn binary that reported.
	AgentVersion string `json:"agentVersion,omitempty" yaml:"agentVersion,omitempty"`
	// ReportedAt is when the server received the report (set by the
	// server, whatever the agent sends).
	ReportedAt Time `json:"reportedAt" yaml:"reportedAt"`
}

// OSFacts describe the host's operating system: os-release's ID, NAME,
// VERSION and VERSION_ID, the kernel release and the machine's
// architecture as Go names it (amd64, arm64).
type OSFacts struct {
	ID        string `json:"id,omitempty" yaml:"id,omitempty"`
	Name      string `json:"name,omitempty" yaml:"name,omitempty"`
	Version   string `json:"version,omitempty" yaml:"version,omitempty"`
	VersionID string `json:"versionId,omitempty" yaml:"versionId,omitempty"`
	Kernel    string `json:"kernel,omitempty" yaml:"kernel,omitempty"`
	Arch      string `json:"arch,omitempty" yaml:"arch,omitempty"`
}

// Bounds of a facts report: a peer decides its size, so every field has
// one.
const (
	MaxFactsBytes     = 64 << 10
	maxFactAddresses  = 64
	maxFactNameLen    = 253
	maxFactTextLen    = 128
	maxFactCPUs       = 1 << 16
	maxFactMemory     = 1 << 50
	maxFactBootIDLen  = 64
	factHostnameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
)

// Validate checks a report and puts its addresses in canonical form. Its
// errors name the field, never quote more than a bounded part of it.
func (f *NodeFacts) Validate() error {
	if err := checkHostname("hostname", f.Hostname, true); err != nil {
		return err
	}
	if err := checkHostname("fqdn", f.FQDN, false); err != nil {
		return err
	}
	if len(f.Addresses) > maxFactAddresses {
		return fmt.Errorf("addresses: at most %d, got %d", maxFactAddresses, len(f.Addresses))
	}
	for i, a := range f.Addresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			addr, aerr := netip.ParseAddr(a)
			if aerr != nil || len(a) > 64 || addr.Zone() != "" {
				return fmt.Errorf("addresses[%d]: want an IP address or CIDR prefix", i)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		f.Addresses[i] = p.String()
	}
	for _, t := range []struct{ name, v string }{
		{"os.id", f.OS.ID}, {"os.name", f.OS.Name}, {"os.version", f.OS.Version}, {"os.versionId", f.OS.VersionID},
		{"os.kernel", f.OS.Kernel}, {"os.arch", f.OS.Arch}, {"agentVersion", f.AgentVersion},
	} {
		if err := checkFactText(t.name, t.v); err != nil {
			return err
		}
	}
	if f.CPUs < 1 || f.CPUs > maxFactCPUs {
		return fmt.Errorf("cpus: want 1 to %d, got %d", maxFactCPUs, f.CPUs)
	}
	if f.MemoryBytes < 0 || f.MemoryBytes > maxFactMemory {
		return fmt.Errorf("memoryBytes: want 0 to %d, got %d", int64(maxFactMemory), f.MemoryBytes)
	}
	if len(f.BootID) > maxFactBootIDLen || strings.Trim(strings.ToLower(f.BootID), "0123456789abcdef-") != "" {
		return errors.New("bootId: want a UUID")
	}
	return nil
}

func checkHostname(field, v string, required bool) error {
	switch {
	case v == "" && required:
		return fmt.Errorf("%s: required", field)
	case len(v) > maxFactNameLen:
		return fmt.Errorf("%s: at most %d bytes", field, maxFactNameLen)
	case strings.Trim(v, factHostnameChars) != "":
		return fmt.Errorf("%s: want letters, digits, '.', '-' and '_'", field)
	}
	return nil
}

func checkFactText(field, v string) error {
	if len(v) > maxFactTextLen {
		return fmt.Errorf("%s: at most %d bytes", field, maxFactTextLen)
	}
	for _, r := range v {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return fmt.Errorf("%s: printable text only", field)
		}
	}
	return nil
}

// Map is the facts as conditions and placeholders read them: the JSON
// form's keys, numbers as integers.
func (f *NodeFacts) Map() map[string]any {
	addrs := make([]any, len(f.Addresses))
	for i, a := range f.Addresses {
		addrs[i] = a
	}
	os := map[string]any{}
	for k, v := range map[string]string{"id": f.OS.ID, "name": f.OS.Name, "version": f.OS.Version,
		"versionId": f.OS.VersionID, "kernel": f.OS.Kernel, "arch": f.OS.Arch} {
		if v != "" {
			os[k] = v
		}
	}
	m := map[string]any{
		"hostname": f.Hostname, "addresses": addrs, "os": os, "cpus": int64(f.CPUs),
		"memoryBytes": f.MemoryBytes, "reportedAt": f.ReportedAt.UTC().Format("2006-01-02T15:04:05Z07:00"),
	}
	for k, v := range map[string]string{"fqdn": f.FQDN, "bootId": f.BootID, "agentVersion": f.AgentVersion} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}
