package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestPackageManagerChoice: auto picks apt where apt-get and dpkg-query
// are in PATH, else dnf where dnf and rpm are; a manager named is used
// whatever PATH holds; an unknown one fails every call, saying so.
func TestPackageManagerChoice(t *testing.T) {
	tests := []struct {
		name     string
		manager  string
		programs []string
		want     string
		err      string
	}{
		{"auto, both", "", []string{"apt-get", "dpkg-query", "dnf", "rpm"}, "apt", ""},
		{"auto, dnf and rpm", PackageManagerAuto, []string{"dnf", "rpm"}, "dnf", ""},
		{"auto, dnf without rpm", PackageManagerAuto, []string{"dnf"}, "apt", ""},
		{"auto, apt-get without dpkg", PackageManagerAuto, []string{"apt-get", "dnf", "rpm"}, "dnf", ""},
		{"auto, nothing", PackageManagerAuto, nil, "apt", ""},
		{"dnf named", PackageManagerDnf, []string{"apt-get", "dpkg-query"}, "dnf", ""},
		{"apt named", PackageManagerApt, []string{"dnf", "rpm"}, "apt", ""},
		{"unknown", "yum", []string{"apt-get", "dpkg-query"}, "", `package manager "yum": want auto, apt or dnf`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, p := range tt.programs {
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\nexit 0\n"), 0o755))
			}
			t.Setenv("PATH", dir)
			p := NewPackage(PackageOptions{Manager: tt.manager}).(packageProvider)
			if tt.err != "" {
				_, err := p.Canonicalize(model.Spec{"name": "curl"})
				require.EqualError(t, err, tt.err)
				_, err = p.Read(context.Background(), Env{}, model.Spec{"name": "curl"})
				require.EqualError(t, err, tt.err)
				return
			}
			assert.Equal(t, tt.want, p.m.tool())
		})
	}
	// With neither found, apt's first run names what is missing.
	t.Setenv("PATH", t.TempDir())
	_, err := NewPackage(PackageOptions{}).Read(context.Background(), Env{}, model.Spec{"name": "curl"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dpkg-query")
}
