package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadPackageManager(t *testing.T) {
	tests := []struct {
		value, want, err string
	}{
		{"", "auto", ""},
		{"auto", "auto", ""},
		{"apt", "apt", ""},
		{" DNF ", "dnf", ""},
		{"yum", "", `CAIRN_PACKAGE_MANAGER: want auto, apt or dnf, got "yum"`},
		{"apt,dnf", "", `CAIRN_PACKAGE_MANAGER: want auto, apt or dnf, got "apt,dnf"`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			env := map[string]string{"CAIRN_PACKAGE_MANAGER": tt.value}
			c, err := Load(Values(func(k string) string { return env[k] }))
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.PackageManager)
		})
	}
}
