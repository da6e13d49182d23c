package providers

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalMode(t *testing.T) {
	tests := []struct {
		in      any
		want    string
		wantErr bool
	}{
		{in: "0644", want: "0644"},
		{in: "644", want: "0644"},
		{in: "0o644", want: "0644"},
		{in: " 755 ", want: "0755"},
		{in: "4755", want: "4755"},
		{in: 644, want: "0644"},          // octal digits written as a number
		{in: int64(644), want: "0644"},   // the same from a YAML decoder
		{in: float64(644), want: "0644"}, // the same from JSON
		{in: 420, want: "0644"},          // YAML's reading of 0644
		{in: float64(420), want: "0644"},
		{in: 493, want: "0755"}, // 0755 as a value: 9 is no octal digit
		{in: 511, want: "0777"}, // 0777 as a value beats 0511 (execute-only triads)
		{in: 448, want: "0700"},
		{in: 384, want: "0600"},
		{in: 416, want: "0640"},
		{in: 256, want: "0400"},
		{in: 400, want: "0400"},
		{in: 755, want: "0755"},
		{in: 700, want: "0700"},
		{in: 600, want: "0600"},
		{in: 444, want: "0444"},
		{in: 1777, want: "1777"},
		{in: 0, want: "0000"},
		{in: json.Number("644"), want: "0644"},
		{in: "0999", wantErr: true},
		{in: "rw-r--r--", wantErr: true},
		{in: "", wantErr: true},
		{in: "17777", wantErr: true},
		{in: -1, wantErr: true},
		{in: 99999, wantErr: true},
		{in: 6.5, wantErr: true},
		{in: true, wantErr: true},
		{in: nil, wantErr: true},
	}
	for _, tt := range tests {
		got, err := CanonicalMode(tt.in)
		if tt.wantErr {
			assert.Error(t, err, "CanonicalMode(%#v) = %q, want an error", tt.in, got)
			continue
		}
		require.NoError(t, err, "CanonicalMode(%#v) = %q, %v; want %q", tt.in, got, err, tt.want)
		assert.Equal(t, tt.want, got, "CanonicalMode(%#v) = %q, %v; want %q", tt.in, got, err, tt.want)
	}
}

func TestEqualValues(t *testing.T) {
	var fromJSON any
	require.NoError(t, json.Unmarshal([]byte(`{"b":[1,2.5,{"x":3}],"a":"s","c":null}`), &fromJSON))
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"int vs float64", 5, float64(5), true},
		{"int64 vs json.Number", int64(7), json.Number("7"), true},
		{"fraction differs", 2.5, 2, false},
		{"key order and number types", fromJSON, map[string]any{"a": "s", "c": nil, "b": []any{int64(1), 2.5, map[string]any{"x": 3}}}, true},
		{"[]string vs []any", []string{"a", "b"}, []any{"a", "b"}, true},
		{"list order matters", []any{"a", "b"}, []any{"b", "a"}, false},
		{"map[string]string", map[string]string{"k": "v"}, map[string]any{"k": "v"}, true},
		{"missing key", map[string]any{"a": 1}, map[string]any{"a": 1, "b": nil}, false},
		{"string vs number", "1", 1, false},
		{"nil vs nil", nil, nil, true},
		{"struct via json", struct {
			A int `json:"a"`
		}{A: 1}, map[string]any{"a": 1.0}, true},
	}
	for _, tt := range tests {
		got := EqualValues(tt.a, tt.b)
		assert.Equal(t, tt.want, got, "%s: EqualValues = %v, want %v", tt.name, got, tt.want)
	}
}

func TestCanonicalPathAndURL(t *testing.T) {
	paths := map[string]string{
		"/etc/motd/":     "/etc/motd",
		"/etc//cairn/./": "/etc/cairn",
		"etc/motd/":      "etc/motd",
		"/":              "/",
	}
	for in, want := range paths {
		got := CanonicalPath(in)
		assert.Equal(t, want, got, "CanonicalPath(%q) = %q, want %q", in, got, want)
	}
	urls := map[string]string{
		"HTTP://Example.COM/api/v2/": "http://example.com/api/v2",
		"http://example.com/":        "http://example.com",
		"http://example.com/a?b=c":   "http://example.com/a?b=c",
	}
	for in, want := range urls {
		got, err := CanonicalURL(in)
		require.NoError(t, err, "CanonicalURL(%q) = %q, %v; want %q", in, got, err, want)
		assert.Equal(t, want, got, "CanonicalURL(%q) = %q, %v; want %q", in, got, err, want)
	}
	_, err := CanonicalURL("http://[::1")
	assert.Error(t, err, "CanonicalURL accepted a broken URL")
}

func TestCanonicalDuration(t *testing.T) {
	tests := []struct {
		in      any
		want    time.Duration
		wantErr bool
	}{
		{in: 60, want: time.Minute},
		{in: float64(1.5), want: 1500 * time.Millisecond},
		{in: "90s", want: 90 * time.Second},
		{in: "90", want: 90 * time.Second},
		{in: "1m30s", want: 90 * time.Second},
		{in: "-1s", wantErr: true},
		{in: -3, wantErr: true},
		{in: "soon", wantErr: true},
		{in: []any{}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := CanonicalDuration(tt.in)
		require.Equal(t, tt.wantErr, err != nil, "CanonicalDuration(%#v) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		assert.Equal(t, tt.want, got, "CanonicalDuration(%#v) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
	}
}
