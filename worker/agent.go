package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/workflows"
)

// Agent is `cairn agent`: a worker on one node's task queue, applying that
// node's steps on the host it runs on. Temporal is the transport: the agent
// only polls, so it needs no inbound port, and a step scheduled while no
// agent polls fails after the execution's node wait instead of hanging.
// It holds no database credentials: its step data comes through Deps.Steps
// (the server's agent API).
type Agent struct {
	Cluster string
	Node    model.Node
	Queue   string
	Root    string
	w       sdkworker.Worker
}

// NewAgent builds the worker of the node of the cluster, applying inside
// root ("" = the host's filesystem, absolute paths as given). A node the
// server serves itself (mode local) is refused, since two workers on one
// queue would run its steps in two places.
func NewAgent(c client.Client, d Deps, cluster string, node model.Node, root string, o Options) (*Agent, error) {
	if d.Steps == nil {
		return nil, errors.New("agent: the agent API's step data is required")
	}
	if cluster == "" || node.ID == "" {
		return nil, errors.New("agent: a cluster and a node are required")
	}
	if isLocal(node) {
		return nil, fmt.Errorf("agent: node %q of cluster %q is a local node, served by the server itself; set its mode to %q to serve it with an agent", node.ID, cluster, model.NodeAgent)
	}
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, fmt.Errorf("agent: root %q: %w", root, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		root = abs
	}
	d.Store = nil // an agent never reaches the database
	// Each run of the agent is a boot of its own: a reboot step that
	// finds another boot knows the node went down and came back.
	w, err := NewNodeWorker(c, d, cluster, providers.Node{Name: node.ID, Root: root, Host: providers.NewHost(nil)}, o)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &Agent{Cluster: cluster, Node: node, Queue: workflows.NodeTaskQueue(cluster, node.ID), Root: root, w: w}, nil
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

// isLocal reports whether the server serves the node itself; nodes without
// a mode are local, for development.
func isLocal(n model.Node) bool { return n.Mode == "" || n.Mode == model.NodeLocal }
