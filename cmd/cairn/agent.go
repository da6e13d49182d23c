package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/worker"
)

// agentSettings are the configuration variables `cairn agent` reads; each
// has its flag and its CAIRN_* variable (internal/config).
var agentSettings = []string{
	"CAIRN_CLUSTER", "CAIRN_NODE", "CAIRN_NODE_ROOT",
	"CAIRN_TEMPORAL_ADDRESS", "CAIRN_TEMPORAL_NAMESPACE", "CAIRN_DATABASE_URL", "CAIRN_DATA_DIR",
	"CAIRN_CODEC_KEY", "CAIRN_SECRETS_FILE", "CAIRN_KINDS_DIR", "CAIRN_WORKER_POLLERS", "CAIRN_WORKER_DRAIN",
	"CAIRN_LOG_LEVEL", "CAIRN_LOG_FORMAT",
}

// newAgentCmd is `cairn agent --cluster C --node N [--root DIR]`: the
// worker of one agent node, run on that node's host.
func newAgentCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent --cluster C --node N [--root DIR]",
		Short: "Run the steps of one node of a cluster on this host",
		Long: "Agent serves a node whose mode is agent: it polls the node's Temporal task queue and\n" +
			"applies the node's steps on this host, inside --root when given. It needs the same\n" +
			"Temporal, database and codec key as the server. Settings come from flags, else from\n" +
			"the CAIRN_* environment variables.",
		Args: cobra.NoArgs,
	}
	load := settingFlags(cmd, agentSettings, map[string]string{"root": "CAIRN_NODE_ROOT"})
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := load()
		if err != nil {
			return err
		}
		if cfg.Cluster == "" || cfg.Node == "" {
			return fmt.Errorf("--cluster and --node are required (or CAIRN_CLUSTER and CAIRN_NODE)")
		}
		return worker.ServeAgent(cmd.Context(), cfg, newLogger(a, cfg), func(ag *worker.Agent) {
			fmt.Fprintf(a.stdout, "agent for node %s of cluster %s polling task queue %s\n", ag.Node.ID, cfg.Cluster, ag.Queue)
		})
	}
	return cmd
}
