package deploy

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unit is a systemd unit file read as systemd does for the keys this
// package's tests use: section → key → values (a key may repeat).
type unit map[string]map[string][]string

// readUnit parses a unit file: [Section] headers, Key=Value lines,
// comments (# and ;) and blank lines; no line continuations (the units
// here have none).
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "%s: not Key=Value: %q", path, line)
			require.NotEmpty(t, section, "%s: %q outside a section", path, line)
			require.False(t, strings.HasSuffix(v, `\`), "%s: line continuations are not read here", path)
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	require.NoError(t, sc.Err())
	return u
}

// one is the single value of a key of [Service] ("" when absent).
func (u unit) one(t *testing.T, key string) string {
	t.Helper()
	vs := u["Service"][key]
	require.LessOrEqual(t, len(vs), 1, "%s set %d times", key, len(vs))
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// The units say what the operator relies on: where the settings are, how
// they restart, who they run as and how they are stopped.
func TestUnitsDeclareTheirContract(t *testing.T) {
	tests := []struct {
		file string
		want map[string]string
	}{
		{"cairn-agent.service", map[string]string{
			"User": "root", "EnvironmentFile": "/etc/cairn/agent.env", "ExecStart": "/usr/bin/cairn agent",
			"Restart": "on-failure", "KillMode": "mixed",
		}},
		{"cairn-agent@.service", map[string]string{
			"User": "root", "EnvironmentFile": "/etc/cairn/agent-%i.env", "ExecStart": "/usr/bin/cairn agent",
			"Restart": "on-failure", "KillMode": "mixed",
		}},
		{"cairn-server.service", map[string]string{
			"User": "cairn", "Group": "cairn", "EnvironmentFile": "/etc/cairn/server.env",
			"ExecStart": "/usr/bin/cairn server --data-dir /var/lib/cairn", "StateDirectory": "cairn",
			"Restart": "on-failure", "KillMode": "mixed", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
			"PrivateTmp": "yes", "ProtectHome": "yes", "CapabilityBoundingSet": "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			u := readUnit(t, filepath.Join("systemd", tt.file))
			for k, v := range tt.want {
				_, set := u["Service"][k]
				require.True(t, set, "%s is not set", k)
				assert.Equal(t, v, u.one(t, k), k)
			}
			assert.Equal(t, []string{"multi-user.target"}, u["Install"]["WantedBy"])
		})
	}
}

// The template unit is the plain agent unit but for its settings file
// and description: a hardening added to one and not the other fails here.
func TestAgentTemplateMatchesTheAgentUnit(t *testing.T) {
	plain := readUnit(t, filepath.Join("systemd", "cairn-agent.service"))
	tmpl := readUnit(t, filepath.Join("systemd", "cairn-agent@.service"))
	for _, u := range []unit{plain, tmpl} {
		delete(u["Service"], "EnvironmentFile")
		delete(u["Unit"], "Description")
	}
	require.Equal(t, plain, tmpl)
}
