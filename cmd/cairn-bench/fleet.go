package main

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/fuellab"
	"github.com/cairn-io/cairn/model"
)

// runFleet uploads fuel-library's release graph, its commands made
// trivial, as a release's graph, creates a Fuel-shaped cluster of nodes
// nodes on it (-fleet-agents of them served by `cairn agent` processes,
// the others local nodes), and executes the graph: once, again, and as a
// dry-run. Beside each execution: the floor (as many `true` forks as steps
// ran, as many at a time as there are nodes) and, when ansible-playbook is
// on PATH, the same steps as a playbook on as many local hosts.
func (r *runner) runFleet(ctx context.Context, nodes int) ([]row, error) {
	rel, err := fuellab.ReadRelease(r.opts.fleetLibrary, fuellab.Trivial)
	if err != nil {
		err = fmt.Errorf("%w (see -fleet-library)", err)
	}
	if err != nil {
		return nil, err
	}
	return r.withEnv(ctx, fmt.Sprintf("fleet-%d", nodes), func(e *env) ([]row, error) {
		release, err := e.api.CreateRelease(ctx, model.ReleaseInput{ID: "fuel", Name: "fuel-library", Version: "2015.1.0-8.0"})
		if err != nil {
			return nil, fmt.Errorf("create release: %w", err)
		}
		info, err := e.api.PutGraph(ctx, model.LayerRelease, release.ID, "default", client.Document{Data: rel.YAML, Format: "yaml"})
		if err != nil {
			return nil, fmt.Errorf("upload graph: %w", err)
		}
		if info.Tasks != rel.Tasks {
			return nil, fmt.Errorf("the uploaded graph has %d tasks, want %d", info.Tasks, rel.Tasks)
		}
		agents := r.opts.fleetAgents
		in := model.ClusterInput{ID: "fleet", Name: "fleet", ReleaseID: release.ID, Nodes: fuellab.Nodes(nodes), Settings: fuellab.Settings()}
		agentNodes(in.Nodes, agents)
		cl, err := e.api.CreateCluster(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("create cluster: %w", err)
		}
		if agents > 0 {
			r.logf("fleet N=%d: starting %d cairn agent processes", nodes, agents)
			if err := e.startAgents(ctx, r.opts.cairnBin, cl.ID, in.Nodes); err != nil {
				return nil, err
			}
		}
		if err := waitNodes(ctx, e, cl.ID, in.Nodes); err != nil {
			return nil, err
		}
		var (
			levels int
			graph  []model.StepDeps
			ran    []model.StepProgress // the first execution's succeeded steps
			counts []int                // succeeded steps of each execution
		)
		// readGraph reads the expanded graph after the phase (outside its
		// wall time) for the number of dependency levels.
		readGraph := func(id string) error {
			g, err := e.api.ExecutionGraph(ctx, id)
			if err != nil {
				return fmt.Errorf("graph of %s: %w", id, err)
			}
			if levels, err = depthOf(g); err != nil {
				return err
			}
			graph = g
			return nil
		}
		executed := func(ex *model.Execution) (string, error) {
			steps, err := allSteps(ctx, e, ex)
			if err != nil {
				return "", err
			}
			count := map[model.Status]int{}
			var succeeded []model.StepProgress
			for _, s := range steps {
				count[s.Status]++
				if s.Status == model.StatusSucceeded {
					succeeded = append(succeeded, s)
				}
			}
			done := count[model.StatusSucceeded] + count[model.StatusSkipped]
			if done != len(steps) || count[model.StatusSucceeded] == 0 {
				return "", fmt.Errorf("execution %s %s (%s): steps by status %v: want every one succeeded or skipped", ex.ID, ex.Status, ex.Error, count)
			}
			if ex.Progress != nil && ex.Progress.Total != len(steps) {
				return "", fmt.Errorf("%d steps read, progress counts %d", len(steps), ex.Progress.Total)
			}
			if rep := ex.Report; rep == nil || rep.Failed != 0 {
				return "", fmt.Errorf("report %+v, want no failure", ex.Report)
			}
			if err := readGraph(ex.ID); err != nil {
				return "", err
			}
			note := ""
			if ran == nil {
				ran = succeeded
				note = "; " + r.watchCost(ctx, e, ex.ID)
			}
			counts = append(counts, len(succeeded))
			return fmt.Sprintf("%d steps: %d succeeded, %d skipped by their condition; %d levels%s",
				len(steps), count[model.StatusSucceeded], count[model.StatusSkipped], levels, note), nil
		}
		planned := func(ex *model.Execution) (string, error) {
			if ex.Plan == nil || len(ex.Plan.Steps) == 0 {
				return "", fmt.Errorf("plan %+v, want steps", ex.Plan)
			}
			if len(graph) > 0 && len(ex.Plan.Steps) != len(graph) {
				return "", fmt.Errorf("plan of %d steps, the execution had %d", len(ex.Plan.Steps), len(graph))
			}
			return fmt.Sprintf("%d steps planned", len(ex.Plan.Steps)), nil
		}
		served := fmt.Sprintf("%d local nodes", nodes)
		if agents > 0 {
			served = fmt.Sprintf("%d nodes (%d of them `cairn agent` processes)", nodes, agents)
		}
		via := fmt.Sprintf("fuel-library's release graph, %d tasks (%d commands made `true`), on %s", rel.Tasks, rel.Commands, served)
		var rows []row
		for _, ph := range []struct {
			name  string
			req   contract.GraphRequest
			check func(*model.Execution) (string, error)
		}{
			{"execute", contract.GraphRequest{}, executed},
			{"re-execute", contract.GraphRequest{}, executed},
			{"dry-run", contract.GraphRequest{DryRun: true}, planned},
		} {
			rw := row{Shape: shapeFleet, N: nodes, Phase: ph.name, Via: via, Agents: agents}
			err := r.phase(ctx, e, &rw, executeGraph(e, cl.ID, ph.req), ph.check)
			rw.Chain = levels
			rows = append(rows, rw)
			if err != nil {
				return rows, err
			}
		}
		for i, n := range counts {
			if rows[i].Floor, err = forkFloor(ctx, n, nodes); err != nil {
				return rows, fmt.Errorf("floor: %w", err)
			}
			rows[i].Note += fmt.Sprintf("; floor: %d forks of `true`, %d at a time", n, nodes)
			r.logf("  floor of %s: %d forks of `true`, %d at a time, in %s", rows[i].Phase, n, nodes, rows[i].Floor.Round(time.Millisecond))
		}
		r.compareAnsible(ctx, nodes, graph, ran, rows)
		return rows, nil
	})
}

// depthOf is the number of dependency levels of an execution's graph:
// its longest chain of steps.
func depthOf(steps []model.StepDeps) (int, error) {
	deps := make(map[string][]string, len(steps))
	for _, s := range steps {
		deps[s.ID] = s.DependsOn
	}
	depth := make(map[string]int, len(steps))
	const visiting = -1
	var visit func(id string) (int, error)
	visit = func(id string) (int, error) {
		switch d := depth[id]; {
		case d == visiting:
			return 0, fmt.Errorf("cycle through %s", id)
		case d > 0:
			return d, nil
		}
		depth[id] = visiting
		d := 0
		for _, dep := range deps[id] {
			if _, ok := deps[dep]; !ok {
				continue
			}
			dd, err := visit(dep)
			if err != nil {
				return 0, err
			}
			d = max(d, dd)
		}
		depth[id] = d + 1
		return d + 1, nil
	}
	most := 0
	for _, s := range steps {
		d, err := visit(s.ID)
		if err != nil {
			return 0, err
		}
		most = max(most, d)
	}
	return most, nil
}

// forkFloor is the time n forks of `/bin/sh -c true` take, parallel at a
// time: what the commands of an execution cost with nothing around them.
func forkFloor(ctx context.Context, n, parallel int) (time.Duration, error) {
	jobs := make(chan struct{})
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	t0 := time.Now()
	for range min(parallel, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				if err := exec.CommandContext(ctx, "/bin/sh", "-c", "true").Run(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	d := time.Since(t0)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return d, nil
}

// stepTask is the task of a graph step id "task@node".
func stepTask(id string) string {
	if i := strings.LastIndexByte(id, '@'); i >= 0 {
		return id[:i]
	}
	return id
}

// playbookOrder is the tasks of the steps that ran, in an order that
// keeps every step after the ones it depends on (by the level of each
// task's deepest step), each with the hosts it ran on.
func playbookOrder(graph []model.StepDeps, ran []model.StepProgress) (tasks []string, hosts map[string][]string) {
	level := map[string]int{}
	deps := map[string][]string{}
	for _, s := range graph {
		deps[s.ID] = s.DependsOn
	}
	var visit func(id string) int
	visit = func(id string) int {
		if l, ok := level[id]; ok {
			return l
		}
		level[id] = 0
		l := 0
		for _, d := range deps[id] {
			if _, ok := deps[d]; ok {
				l = max(l, visit(d)+1)
			}
		}
		level[id] = l
		return l
	}
	taskLevel := map[string]int{}
	hosts = map[string][]string{}
	for _, s := range ran {
		t := stepTask(s.ID)
		if _, ok := hosts[t]; !ok {
			tasks = append(tasks, t)
		}
		hosts[t] = append(hosts[t], cmp.Or(s.Node, model.ControlPlane))
		taskLevel[t] = max(taskLevel[t], visit(s.ID))
	}
	slices.SortStableFunc(tasks, func(a, b string) int {
		if c := taskLevel[a] - taskLevel[b]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return tasks, hosts
}
