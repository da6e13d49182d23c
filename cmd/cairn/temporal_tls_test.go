package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `cairn server`, `cairn worker` and `cairn agent` take the Temporal TLS and
// API key settings as flags and check them at start; `cairn dev`, which
// starts its own loopback dev server, does not take them.
func TestTemporalSecurityFlags(t *testing.T) {
	for _, k := range temporalSecuritySettings {
		t.Setenv(k, "")
	}
	missing := filepath.Join(t.TempDir(), "ca.pem")
	for name, newCmd := range map[string]func(*app) *cobra.Command{
		"server": newServerCmd, "worker": newWorkerCmd, "agent": newAgentCmd,
	} {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"--temporal-tls-cert", "client.pem"}, "CAIRN_TEMPORAL_TLS_CERT is set without CAIRN_TEMPORAL_TLS_KEY"},
				{[]string{"--temporal-tls-ca", missing}, "CAIRN_TEMPORAL_TLS_CA: open " + missing},
				{[]string{"--temporal-tls", "sometimes"}, "CAIRN_TEMPORAL_TLS: want true or false"},
				{[]string{"--temporal-api-key", "k", "--temporal-api-key-file", missing}, "are both set"},
			} {
				var out, errOut bytes.Buffer
				cmd := newCmd(&app{stdout: &out, stderr: &errOut})
				args := append([]string{"--data-dir", t.TempDir()}, tc.args...)
				if name == "agent" {
					// An agent has no data dir: it reaches its node's data
					// through the server, with its node token.
					args = append(tc.args, "--server", "http://127.0.0.1:1", "--node-token", "t")
				}
				cmd.SetArgs(args)
				err := cmd.ExecuteContext(context.Background())
				require.Error(t, err, "%v", tc.args)
				assert.Contains(t, err.Error(), tc.want)
			}
		})
	}
	t.Run("dev", func(t *testing.T) {
		cmd := newDevCmd(&app{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
		assert.Nil(t, cmd.Flags().Lookup("temporal-tls-cert"))
		assert.Nil(t, cmd.Flags().Lookup("temporal-api-key"))
	})
}
