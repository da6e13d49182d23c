package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/worker"
)

// ServeAgent is `cairn agent`: configured by the same Runtime as the
// server's workers (payload codec, kinds, providers, secrets), it asks the
// server's agent API (cfg.Server, with the node token cfg.NodeToken) which
// node it serves, and polls that node's task queue until ctx ends, reading
// and writing the node's step data through the agent API: it needs no
// database credentials. cfg.Cluster and cfg.Node, when set, must name the
// token's node, and its codec key must be the server's (or both have
// none): an agent that could not open the server's payloads would take
// steps only to fail them, so it refuses to start. It reaches the server
// over TLS beyond loopback (agentHTTPClient) and reports its host's facts
// before it polls. Once the server refuses its token (revoked or rotated)
// it stops polling, lets its steps in flight end, and returns
// agentapi.ErrTokenRefused: the steps it leaves wait for an agent with a
// valid token. While it serves, it watches the paths of its node the
// server lists for the stacks whose drift settings say watch
// (runAgentWatch). ready, when set, is called once the agent polls.
func ServeAgent(ctx context.Context, cfg *config.Config, log *slog.Logger, ready func(*worker.Agent)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.NodeToken == "" {
		return errors.New("agent: a node token is required (--node-token or CAIRN_NODE_TOKEN; issue one with cairn node token CLUSTER NODE)")
	}
	rt, err := NewRuntime(cfg, log)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	hc, err := agentHTTPClient(cfg)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	api, err := agentapi.NewClient(cfg.Server, cfg.NodeToken, hc)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	refused := onRefused(api)
	info, err := api.Node(ctx)
	if err != nil {
		return fmt.Errorf("agent: ask %s which node the token serves: %w", cfg.Server, err)
	}
	if cfg.Cluster != "" && cfg.Cluster != info.Cluster {
		return fmt.Errorf("agent: the node token is for cluster %q, not %q", info.Cluster, cfg.Cluster)
	}
	if cfg.Node != "" && cfg.Node != info.Node.ID && cfg.Node != info.Node.Name {
		return fmt.Errorf("agent: the node token is for node %q, not %q", info.Node.ID, cfg.Node)
	}
	own := ""
	if rt.Key != nil {
		own = codec.KeyID(rt.Key)
	}
	if err := info.CheckCodecKey(own); err != nil {
		return fmt.Errorf("agent for node %s of cluster %s: %w", info.Node.ID, info.Cluster, err)
	}
	reportFacts(ctx, api, log)
	c, err := rt.Dial(ctx)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	defer c.Close()
	deps := rt.Deps
	deps.Steps = api
	a, err := worker.NewAgent(c, deps, info.Cluster, info.Node, cfg.NodeRoot, worker.Options{NodePollers: cfg.NodePollers, Drain: cfg.WorkerDrain, BeforeStateLimit: cfg.BeforeStateLimit})
	if err != nil {
		return err
	}
	if err := a.Start(); err != nil {
		return err
	}
	log.Info("agent polling", "cluster", a.Cluster, "node", a.Node.ID, "queue", a.Queue, "root", a.Root)
	stopWatch := goWatch(ctx, api, a.Root, cfg.SystemdAddress, log)
	defer stopWatch()
	if ready != nil {
		ready(a)
	}
	select {
	case <-ctx.Done():
	case <-refused:
		log.Error("node token refused: stopping", "err", agentapi.ErrTokenRefused)
	}
	a.Stop()
	select {
	case <-refused:
		return fmt.Errorf("agent for node %s of cluster %s: %w", info.Node.ID, info.Cluster, agentapi.ErrTokenRefused)
	default:
		return nil
	}
}
