package main

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/workflows"
)

// runFuel uploads the Fuel graph as a release's, creates a cluster of
// local nodes on that release, and executes the graph: once, again, and
// as a dry-run.
func (r *runner) runFuel(ctx context.Context, tasks, nodes int) ([]row, error) {
	g, err := genFuel(tasks, nodes)
	if err != nil {
		return nil, err
	}
	return r.withEnv(ctx, fmt.Sprintf("fuel-%d", tasks), func(e *env) ([]row, error) {
		rel, err := e.api.CreateRelease(ctx, model.ReleaseInput{ID: "bench", Name: "bench release"})
		if err != nil {
			return nil, fmt.Errorf("create release: %w", err)
		}
		info, err := e.api.PutGraph(ctx, model.LayerRelease, rel.ID, "default", client.Document{Data: []byte(g.yaml()), Format: "yaml"})
		if err != nil {
			return nil, fmt.Errorf("upload graph: %w", err)
		}
		if info.Tasks != tasks {
			return nil, fmt.Errorf("the uploaded graph has %d tasks, want %d", info.Tasks, tasks)
		}
		in := model.ClusterInput{ID: "bench", Name: "bench", ReleaseID: rel.ID}
		for i := range nodes {
			in.Nodes = append(in.Nodes, model.Node{ID: g.node(i), Name: g.node(i), Roles: []string{g.role(i)}, Mode: model.NodeLocal})
		}
		cl, err := e.api.CreateCluster(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("create cluster: %w", err)
		}
		if err := waitNodes(ctx, e, cl.ID, in.Nodes); err != nil {
			return nil, err
		}
		ran := func(ex *model.Execution) (string, error) {
			count := map[model.Status]int{}
			for _, s := range ex.Steps {
				count[s.Status]++
			}
			if count[model.StatusSucceeded] != tasks || len(ex.Steps) != tasks {
				return "", fmt.Errorf("steps by status %v, want %d succeeded", count, tasks)
			}
			return fmt.Sprintf("%d steps succeeded on %d nodes", tasks, nodes), nil
		}
		planned := func(ex *model.Execution) (string, error) {
			if ex.Plan == nil || len(ex.Plan.Steps) != tasks {
				return "", fmt.Errorf("plan %+v, want %d steps", ex.Plan, tasks)
			}
			return fmt.Sprintf("%d steps planned", tasks), nil
		}
		var rows []row
		for _, ph := range []struct {
			name  string
			req   contract.GraphRequest
			check func(*model.Execution) (string, error)
		}{
			{"execute", contract.GraphRequest{}, ran},
			{"re-execute", contract.GraphRequest{}, ran},
			{"dry-run", contract.GraphRequest{DryRun: true}, planned},
		} {
			rw := row{Shape: shapeFuel, N: tasks, Phase: ph.name, Chain: g.chain, Via: fmt.Sprintf("%d local nodes", nodes)}
			err := r.phase(ctx, e, &rw, executeGraph(e, cl.ID, ph.req), ph.check)
			rows = append(rows, rw)
			if err != nil {
				return rows, err
			}
		}
		return rows, nil
	})
}

// waitNodes waits until the server serves every local node of the cluster
// (it picks new clusters up within seconds), so the first execution does
// not measure that.
func waitNodes(ctx context.Context, e *env, cluster string, nodes []model.Node) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, n := range nodes {
		queue := workflows.NodeTaskQueue(cluster, n.ID)
		for {
			resp, err := e.tc.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
			if err == nil && len(resp.GetPollers()) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("node %s of cluster %s: no worker polls %s: %w", n.ID, cluster, queue, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}
