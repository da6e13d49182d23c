package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/server"
	"github.com/cairn-io/cairn/worker"
)

// agentSettings are the configuration variables `cairn agent` reads; each
// has its flag and its CAIRN_* variable (internal/config). No database
// setting: an agent reaches its node's step data through the server.
var agentSettings = append([]string{
	"CAIRN_SERVER", "CAIRN_NODE_TOKEN", "CAIRN_CLUSTER", "CAIRN_NODE", "CAIRN_NODE_ROOT",
	"CAIRN_TEMPORAL_ADDRESS", "CAIRN_TEMPORAL_NAMESPACE",
	"CAIRN_CODEC_KEY", "CAIRN_SECRETS_FILE", "CAIRN_KINDS_DIR", "CAIRN_NODE_POLLERS", "CAIRN_WORKER_DRAIN",
	"CAIRN_LOG_LEVEL", "CAIRN_LOG_FORMAT", "CAIRN_REBOOT_COMMAND", "CAIRN_PACKAGE_MANAGER", "CAIRN_SYSTEMD_ADDRESS",
}, slices.Concat(temporalSecuritySettings, apiTLSAgentSettings)...)

// newAgentCmd is `cairn agent --server URL --node-token T [--root DIR]`:
// the worker of one agent node, run on that node's host.
func newAgentCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent --server URL --node-token TOKEN [--cluster C --node N] [--root DIR]",
		Short: "Run the steps of one node of a cluster on this host",
		Long: "Agent serves a node whose mode is agent: it polls the node's Temporal task queue and\n" +
			"applies the node's steps on this host, inside --root when given. It needs the server's\n" +
			"URL and the node's token (`cairn node token CLUSTER NODE` issues one), the\n" +
			"same Temporal (with its TLS and API key settings) and codec key as the server, and no\n" +
			"database credentials. --cluster and --node, when given, must name the token's node.\n" +
			"Beyond loopback it reaches the server over https:// only, pinning the certificate\n" +
			"fingerprint `cairn node token` prints (--server-fingerprint) or trusting --server-ca.\n" +
			"Settings come from flags, else from the CAIRN_* environment variables.",
		Args: cobra.NoArgs,
	}
	load := settingFlags(cmd, agentSettings, map[string]string{"root": "CAIRN_NODE_ROOT"})
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := load()
		if err != nil {
			return err
		}
		if cfg.NodeToken == "" {
			return fmt.Errorf("--node-token is required (or CAIRN_NODE_TOKEN)")
		}
		return server.ServeAgent(cmd.Context(), cfg, newLogger(a, cfg), func(ag *worker.Agent) {
			fmt.Fprintf(a.stdout, "agent for node %s of cluster %s polling task queue %s\n", ag.Node.ID, ag.Cluster, ag.Queue)
		})
	}
	return cmd
}
