package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/cairn-io/cairn/model"
)

// agentNodes picks n of the nodes to be served by agents, spread evenly
// (n of 200 is every fourth node; n equal to the size is every node), and
// sets their mode.
func agentNodes(nodes []model.Node, n int) {
	for j := range n {
		nodes[(j+1)*len(nodes)/n-1].Mode = model.NodeAgent
	}
}

// startAgents runs a `cairn agent` process (the binary measured) for each
// agent node of the cluster: a node token issued through the API, a root
// under the env's directory, the server's URL and Temporal. It returns
// once every agent was started; waitNodes says when they poll.
func (e *env) startAgents(ctx context.Context, cairnBin, cluster string, nodes []model.Node) error {
	var agents []model.Node
	for _, n := range nodes {
		if n.Mode == model.NodeAgent {
			agents = append(agents, n)
		}
	}
	tokens := make([]string, len(agents))
	for i, n := range agents {
		tok, err := e.api.IssueNodeToken(ctx, cluster, n.ID)
		if err != nil {
			return fmt.Errorf("token of node %s: %w", n.ID, err)
		}
		tokens[i] = tok.Token
	}
	dir := filepath.Join(e.dir, "agents", cluster)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, 8)
	for i, n := range agents {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			root := filepath.Join(dir, n.ID)
			err := os.MkdirAll(root, 0o755)
			var p *process
			if err == nil {
				vars := map[string]string{
					"CAIRN_SERVER": e.apiURL, "CAIRN_NODE_TOKEN": tokens[i], "CAIRN_NODE_ROOT": root,
					"CAIRN_TEMPORAL_ADDRESS": e.temporalAddr, "CAIRN_LOG_LEVEL": "warn", "CAIRN_LOG_FORMAT": "json",
				}
				p, err = startProcess("cairn agent "+n.ID, filepath.Join(dir, n.ID+".log"), serverEnv(vars), cairnBin, "agent")
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("agent of node %s: %w", n.ID, err))
				return
			}
			e.agents = append(e.agents, p)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	for _, p := range e.agents {
		if p.exited() {
			return fmt.Errorf("%s exited: %v\n%s", p.name, p.err, p.tail(10))
		}
	}
	return nil
}

// stopAgents stops every agent, all at once.
func (e *env) stopAgents() {
	var wg sync.WaitGroup
	for _, p := range e.agents {
		wg.Go(func() {
			_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
			<-p.done
		})
	}
	wg.Wait()
	e.agents = nil
}
