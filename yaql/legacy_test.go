package yaql

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLegacy(t *testing.T) {
	models := map[string]any{
		"settings": map[string]any{
			"common":  map[string]any{"debug": map[string]any{"value": true}},
			"storage": map[string]any{"volumes_ceph": map[string]any{"value": false}, "pools": map[string]any{"value": []any{"rbd", "images"}}},
		},
		"cluster": map[string]any{"status": "operational", "mode": "ha_compact", "net_provider": "neutron"},
		"release": map[string]any{"version": "liberty-9.0"},
		"node":    map[string]any{"roles": []any{"compute"}},
	}
	tests := []struct {
		src  string
		want bool
	}{
		{"settings:common.debug.value == true", true},
		{"settings:common.debug.value != true", false},
		{"cluster:status != 'operational'", false},
		{"cluster:mode == \"ha_compact\" and cluster:net_provider == 'neutron'", true},
		{"settings:storage.volumes_ceph.value or cluster:status == 'new'", false},
		{"not settings:storage.volumes_ceph.value", true},
		{"not (settings:common.debug.value and cluster:status == 'operational')", false},
		{"'images' in settings:storage.pools.value", true},
		{"'compute' in node:roles", true},
		{"release:version == 'liberty-9.0'", true},
		{"null == null", true},
		{"1 == 1.0", true},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			x, err := ParseLegacy(tt.src)
			require.NoError(t, err)
			got, err := x.Bool(Input{Models: models})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLegacyErrors(t *testing.T) {
	tests := []struct {
		src string
		col int
		msg string
	}{
		{"settings:a.b = true", 14, "unexpected '=' (compare with ==)"},
		{"cluster:status == 'new' and", 28, "unexpected end of expression"},
		{"nodes:x == 1", 1, `unknown model "nodes" (known: settings, cluster, release, node)`},
		{"(settings:a.b == 1", 19, `expected ")"`},
		{"changed == 1", 1, `unexpected "changed"`},
		{"settings:a..b == 1", 1, "empty name in settings:a..b"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := ParseLegacy(tt.src)
			var ye *Error
			require.ErrorAs(t, err, &ye)
			assert.Equal(t, tt.col, ye.Column, "column")
			assert.Contains(t, ye.Msg, tt.msg)
		})
	}

	x, err := ParseLegacy("settings:storage.missing.value == 1")
	require.NoError(t, err)
	_, err = x.Eval(Input{Models: map[string]any{"settings": map[string]any{"storage": map[string]any{}}}})
	require.ErrorContains(t, err, `settings:storage.missing.value: no "missing"`)
}

func TestIsLegacy(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"settings:common.debug.value == true", true},
		{"cluster:status != 'operational'", true},
		{"'a' == 'b'", true},
		{"{{ changed }}", false},
		{"changed", false},
		{`eq .deps.x "y"`, false},
		{"and (changed) (eq 1 1)", false},
		{"yaql_exp: changed($.x)", false},
		{"settings:common.debug.value = true", true},
		{`eq .x "settings:a"`, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, IsLegacy(tt.src), tt.src)
	}
}
