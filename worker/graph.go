package worker

import (
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/workflows"
)

// RegisterGraph adds graph executions to the control plane's worker w
// (built by New with the same d and o): GraphExecutionWorkflow and the
// activities that prepare a graph (with d.Graphs) and record node history.
// The steps run through the step activities New registers, on the nodes'
// queues.
func RegisterGraph(w sdkworker.Registry, d Deps, o Options) {
	d, o = d.withDefaults(), o.withDefaults()
	RegisterGraphWorkflows(w)
	p := d.Graphs
	if p == nil {
		p = prepare.NewPreparer(d.Store, d.Catalogue, prepare.Files{Dir: o.FilesDir, Limit: o.FilesLimit})
	}
	g := activities.NewGraphActivities(activities.New(activities.Deps{
		Store: d.Store, Registry: d.Registry, Secrets: d.Secrets, Env: d.Env,
		Node: providers.Node{Root: o.Root}, Logger: d.Logger,
	}), p)
	w.RegisterActivityWithOptions(g.PrepareGraph, activity.RegisterOptions{Name: contract.PrepareGraphName})
	w.RegisterActivityWithOptions(g.RecordGraphRuns, activity.RegisterOptions{Name: contract.RecordGraphRunsName})
}

// RegisterGraphWorkflows registers the workflow of graph executions,
// GraphExecutionWorkflow, by its function name (RegisterGraph calls it).
func RegisterGraphWorkflows(r sdkworker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.GraphExecutionWorkflow, workflow.RegisterOptions{})
}

// RegisterAllWorkflows registers every workflow the control plane of
// `cairn server` runs: those New registers (RegisterWorkflows) and those
// RegisterGraph adds (RegisterGraphWorkflows). A replay of recorded
// histories registers them with it, so it replays what a server runs.
func RegisterAllWorkflows(r sdkworker.WorkflowRegistry) {
	RegisterWorkflows(r)
	RegisterGraphWorkflows(r)
}
