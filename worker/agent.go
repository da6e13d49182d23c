package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/workflows"
)

// AgentConfig names the node an agent serves.
type AgentConfig struct {
	Cluster string
	// Node is the node's id or name.
	Node string
	// Root confines the node's paths to a directory; "" means the host's
	// filesystem (absolute paths as given).
	Root string
}

// Agent is `cairn agent`: a worker on one node's task queue, applying that
// node's steps on the host it runs on. Temporal is the transport: the agent
// only polls, so it needs no inbound port, and a step scheduled while no
// agent polls fails after the execution's node wait instead of hanging.
type Agent struct {
	Node  model.Node
	Queue string
	Root  string
	w     sdkworker.Worker
}

// NewAgent checks that the cluster has the node and builds its worker. A
// node the server serves itself (mode local) is refused, since two workers
// on one queue would run its steps in two places.
func NewAgent(ctx context.Context, c client.Client, d Deps, cfg AgentConfig, o Options) (*Agent, error) {
	if d.Store == nil {
		return nil, errors.New("agent: a store is required")
	}
	if cfg.Cluster == "" || cfg.Node == "" {
		return nil, errors.New("agent: --cluster and --node are required")
	}
	cl, err := d.Store.GetCluster(ctx, cfg.Cluster)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("agent: cluster %q not found", cfg.Cluster)
	}
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	n := cl.Node(cfg.Node)
	if n == nil {
		names := make([]string, len(cl.Nodes))
		for i, x := range cl.Nodes {
			names[i] = x.ID
		}
		return nil, fmt.Errorf("agent: cluster %q has no node %q (nodes: %s)", cfg.Cluster, cfg.Node, strings.Join(names, ", "))
	}
	if isLocal(*n) {
		return nil, fmt.Errorf("agent: node %q of cluster %q is a local node, served by the server itself; set its mode to %q to serve it with an agent", n.ID, cl.ID, model.NodeAgent)
	}
	root := ""
	if cfg.Root != "" {
		if root, err = filepath.Abs(cfg.Root); err != nil {
			return nil, fmt.Errorf("agent: root %q: %w", cfg.Root, err)
		}
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	w, err := NewNodeWorker(c, d, cl.ID, providers.Node{Name: n.ID, Root: root}, o)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &Agent{Node: *n, Queue: workflows.NodeTaskQueue(cl.ID, n.ID), Root: root, w: w}, nil
}

// Start begins polling the node's task queue.
func (a *Agent) Start() error {
	if err := a.w.Start(); err != nil {
		return fmt.Errorf("agent for node %s: %w", a.Node.ID, err)
	}
	return nil
}

// Stop stops polling, letting the steps in hand finish within the
// worker's stop timeout.
func (a *Agent) Stop() { a.w.Stop() }

// Run polls the node's task queue until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	a.Stop()
	return nil
}

// ServeAgent is `cairn agent`: it connects to Temporal (sealing payloads
// when a codec key is set, as the server does) and to the store the
// configuration names, loads the secrets and kinds the node's steps may
// need, and serves the node until ctx ends. ready, when set, is called once
// the agent polls.
func ServeAgent(ctx context.Context, cfg *config.Config, log *slog.Logger, ready func(*Agent)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace, Logger: sdklog.NewStructuredLogger(log)}
	var key []byte
	if cfg.CodecKey != "" {
		var err error
		key, err = codec.ParseKey(cfg.CodecKey)
		if err != nil {
			return fmt.Errorf("agent: CAIRN_CODEC_KEY: %w", err)
		}
		if opts.DataConverter, err = codec.DataConverter(key); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return fmt.Errorf("agent: connect to Temporal at %s: %w", cfg.TemporalAddress, err)
	}
	defer c.Close()
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		dbURL = store.DefaultURL(cfg.DataDir)
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	defer st.Close()
	cat := kinds.Builtin()
	if cfg.KindsDir != "" {
		defined, err := kinds.LoadDir(cfg.KindsDir)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		cat = cat.Clone()
		if err := cat.AddAll(defined); err != nil {
			return fmt.Errorf("agent: kinds: %w", err)
		}
	}
	secrets, err := expr.LoadSecrets(cfg.SecretsFile)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	registry := DefaultRegistry(cat, nil)
	if key != nil {
		registry.WithFingerprintKey(codec.DeriveKey(key, codec.PurposeFingerprint))
	}
	a, err := NewAgent(ctx, c, Deps{Store: st, Registry: registry, Catalogue: cat, Secrets: secrets, Logger: log},
		AgentConfig{Cluster: cfg.Cluster, Node: cfg.Node, Root: cfg.NodeRoot}, Options{Pollers: cfg.WorkerPollers})
	if err != nil {
		return err
	}
	if err := a.Start(); err != nil {
		return err
	}
	log.Info("agent polling", "cluster", cfg.Cluster, "node", a.Node.ID, "queue", a.Queue, "root", a.Root)
	if ready != nil {
		ready(a)
	}
	<-ctx.Done()
	a.Stop()
	return nil
}

// isLocal reports whether the server serves the node itself; nodes without
// a mode are local, for development.
func isLocal(n model.Node) bool { return n.Mode == "" || n.Mode == model.NodeLocal }
