// Package worker wires Cairn's workflows and activities into Temporal
// workers: the control plane's worker on the server's task queue, and node
// workers on each node's queue (local nodes inside the server, or `cairn
// agent` on the node's host).
package worker

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/workflows"
)

// DefaultTaskQueue is the control plane's task queue.
const DefaultTaskQueue = "cairn"

// Defaults of Options.
const (
	DefaultPollers     = 8
	DefaultConcurrency = 200
	// DefaultNodePollers is a node worker's activity task pollers: one
	// long poll per node keeps a fleet of a thousand nodes inside a
	// frontend's per-namespace limit of concurrent polls (1,200 by
	// default, see docs/operating.md); a node runs one unit of an
	// execution at a time, and the poller polls again as soon as a task
	// arrives.
	DefaultNodePollers = 1
)

// Deps are what the activities run with.
type Deps struct {
	// Store is the database; nil on an agent, whose node worker reads and
	// writes step data through Steps instead.
	Store store.Store
	// Steps serves the step activities; nil means Store.
	Steps activities.StepData
	// Registry runs the providers; nil means DefaultRegistry(Catalogue).
	Registry *providers.Registry
	// Catalogue is the built-in catalogue plus configured kinds; nil
	// means kinds.Builtin().
	Catalogue *kinds.Catalogue
	// Packages parses package snapshots; nil means the graphs package.
	Packages prepare.PackageLoader
	Secrets  *expr.Secrets
	// Env looks up env refs; nil means the process environment.
	Env    func(string) (string, bool)
	Logger *slog.Logger
	// Fetch reads stacks' URLs on the control plane (schemes, file
	// directory, size and time limits); nil means fetch.New with its
	// defaults (https and http, no file URLs).
	Fetch *fetch.Fetcher
	// Jsonnet evaluates Jsonnet read from stacks' URLs; nil evaluates in
	// this process.
	Jsonnet graphs.JsonnetEvaluator
	// Graphs prepares graph executions; build one in the composition root
	// and share it with the API. Nil: RegisterGraph builds one over Store
	// and Catalogue, reading copy_files sources per Options.FilesDir.
	Graphs *prepare.Preparer
	// HooksAllowPrivate lets webhooks reach loopback, private and
	// link-local addresses (CAIRN_HOOKS_ALLOW_PRIVATE).
	HooksAllowPrivate bool
	// Fence fences off attempts whose heartbeats Temporal no longer
	// acknowledges (liveness.Fence); nil fences nothing. Its Interceptor
	// must be on the workers' Temporal client.
	Fence *liveness.Fence
}

// Options size a worker.
type Options struct {
	// TaskQueue of the control plane (default DefaultTaskQueue).
	TaskQueue string
	// Concurrency is how many activities (steps or batches) the worker
	// runs at once, across executions (default DefaultConcurrency).
	Concurrency int
	// Pollers is the control plane's number of workflow and of activity
	// task pollers (default DefaultPollers).
	Pollers int
	// NodePollers is a node worker's number of activity task pollers
	// (default DefaultNodePollers); a node worker has no workflow task
	// pollers.
	NodePollers int
	// Root confines the control plane's paths ("" = absolute paths as
	// given).
	Root string
	// StepConcurrency is how many steps of one batch converge at once
	// (default activities.DefaultStepConcurrency).
	StepConcurrency int
	// Drain bounds a graceful stop: the worker stops polling at once, lets
	// the steps in flight finish for up to Drain, and hands back what is
	// still running, which another worker resumes at once (default
	// liveness.DefaultDrain). See liveness.Interceptor.
	Drain time.Duration
	// BeforeStateLimit is the most bytes of one step's before-state kept
	// for rollback (default activities.DefaultBeforeStateLimit).
	BeforeStateLimit int
	// FilesDir and FilesLimit: where copy_files sources are read on the
	// control plane, and how much of them one step may read (see
	// prepare.Files), when Deps.Graphs is nil.
	FilesDir   string
	FilesLimit int64
}

func (o Options) withDefaults() Options {
	if o.TaskQueue == "" {
		o.TaskQueue = DefaultTaskQueue
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Pollers <= 0 {
		o.Pollers = DefaultPollers
	}
	if o.NodePollers <= 0 {
		o.NodePollers = DefaultNodePollers
	}
	if o.Drain <= 0 {
		o.Drain = liveness.DefaultDrain
	}
	return o
}

func (d Deps) withDefaults() Deps {
	if d.Catalogue == nil {
		d.Catalogue = kinds.Builtin()
	}
	if d.Registry == nil {
		d.Registry = DefaultRegistry(d.Catalogue, nil)
	}
	if d.Packages == nil {
		d.Packages = prepare.GraphsLoader{Catalogue: d.Catalogue}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Fetch == nil {
		d.Fetch = fetch.New(fetch.Options{})
	}
	return d
}

// DefaultRegistry holds every built-in provider: file, directory, exec,
// sync, copy_files, reboot, the structural kinds, http (over httpClient;
// nil for the default), external and hook (with no hook configured: see
// RegisterFuel).
func DefaultRegistry(cat *kinds.Catalogue, httpClient *http.Client) *providers.Registry {
	reg := providers.NewRegistry(cat)
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	reg.Register(providers.NewHTTP(httpClient))
	reg.Register(providers.NewExternal(providers.ExternalOptions{}))
	reg.Register(providers.NewHook(nil))
	return reg
}

// RegisterFuel configures the providers of Fuel's reboot and provisioning
// hooks: the command a reboot runs ("" for the default) and each
// configured hook's command.
func RegisterFuel(reg *providers.Registry, rebootCommand string, hooks map[string]string) {
	reg.Register(providers.NewReboot(rebootCommand))
	reg.Register(providers.NewHook(hooks))
}

// RegisterExternal configures the external kind (its plugs directory,
// see providers.ExternalOptions).
func RegisterExternal(reg *providers.Registry, opts providers.ExternalOptions) {
	reg.Register(providers.NewExternal(opts))
}

// New returns the control plane's worker: every workflow and activity on
// the server's task queue. Start it with Start or Run.
func New(c client.Client, d Deps, o Options) (sdkworker.Worker, error) {
	if d.Store == nil {
		return nil, fmt.Errorf("worker: a store is required")
	}
	d, o = d.withDefaults(), o.withDefaults()
	w := sdkworker.New(c, o.TaskQueue, workerOptions(o, d.Fence))
	RegisterWorkflows(w)
	RegisterActivities(w, activities.New(activities.Deps{
		Store: d.Store, Steps: d.Steps, Registry: d.Registry, Packages: d.Packages, Secrets: d.Secrets, Env: d.Env,
		Node: providers.Node{Root: o.Root}, Logger: d.Logger, StepConcurrency: o.StepConcurrency,
		Fetch: d.Fetch, Catalogue: d.Catalogue, Jsonnet: d.Jsonnet, BeforeStateLimit: o.BeforeStateLimit,
		Schedules: c.ScheduleClient(), HooksAllowPrivate: d.HooksAllowPrivate,
	}), true)
	return w, nil
}

// NewNodeWorker returns the worker of one node: the step activities on the
// node's task queue (workflows.NodeTaskQueue), applying inside node.Root.
// It polls for activity tasks only (Options.NodePollers long polls), so a
// fleet's polls grow by NodePollers a node.
func NewNodeWorker(c client.Client, d Deps, cluster string, node providers.Node, o Options) (sdkworker.Worker, error) {
	if d.Store == nil && d.Steps == nil {
		return nil, fmt.Errorf("node worker: a store or the agent API's step data is required")
	}
	if node.Name == "" {
		return nil, fmt.Errorf("node worker: a node name is required")
	}
	d, o = d.withDefaults(), o.withDefaults()
	w := sdkworker.New(c, workflows.NodeTaskQueue(cluster, node.Name), nodeWorkerOptions(o, d.Fence))
	RegisterActivities(w, activities.New(activities.Deps{
		Store: d.Store, Steps: d.Steps, Registry: d.Registry, Secrets: d.Secrets, Env: d.Env, Node: node, Cluster: cluster,
		Logger: d.Logger.With("cluster", cluster, "node", node.Name), StepConcurrency: o.StepConcurrency,
		BeforeStateLimit: o.BeforeStateLimit,
	}), false)
	return w, nil
}

// maxHeartbeatThrottle bounds how long the SDK holds back an activity's
// heartbeats, so they reach Temporal well within a heartbeat timeout of a
// few seconds (the SDK's default throttle is 80% of the timeout).
const maxHeartbeatThrottle = time.Second

func workerOptions(o Options, fence *liveness.Fence) sdkworker.Options {
	return sdkworker.Options{
		Interceptors:                           []interceptor.WorkerInterceptor{&liveness.Interceptor{Drain: o.Drain, Fence: fence}},
		WorkerStopTimeout:                      liveness.StopTimeout(o.Drain),
		MaxHeartbeatThrottleInterval:           maxHeartbeatThrottle,
		MaxConcurrentActivityExecutionSize:     o.Concurrency,
		MaxConcurrentWorkflowTaskExecutionSize: max(o.Pollers*2, 16),
		MaxConcurrentActivityTaskPollers:       o.Pollers,
		MaxConcurrentWorkflowTaskPollers:       o.Pollers,
		WorkerActivitiesPerSecond:              0,
		TaskQueueActivitiesPerSecond:           0,
	}
}

// nodeWorkerOptions are workerOptions without a workflow worker and with
// o.NodePollers activity pollers. A node worker registers no workflow, but
// the SDK (v1.50) starts workflow task pollers on a worker's queue unless
// DisableWorkflowWorker is set: without it every node would hold
// o.Pollers idle workflow polls (and a sticky queue's) on the frontend.
func nodeWorkerOptions(o Options, fence *liveness.Fence) sdkworker.Options {
	w := workerOptions(o, fence)
	w.DisableWorkflowWorker = true
	w.MaxConcurrentWorkflowTaskPollers = 0
	w.MaxConcurrentWorkflowTaskExecutionSize = 0
	w.MaxConcurrentActivityTaskPollers = o.NodePollers
	return w
}

// RegisterWorkflows registers Cairn's workflows by their function names.
func RegisterWorkflows(r sdkworker.WorkflowRegistry) {
	for _, wf := range []any{
		workflows.ApplyWorkflow, workflows.DryRunWorkflow, workflows.DestroyWorkflow, workflows.ShardWorkflow,
		workflows.DriftCheckWorkflow, workflows.HookDeliveryWorkflow,
	} {
		r.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{})
	}
}

// RegisterActivities registers the activities under their names; control
// adds the control plane's own (prepare, record, plan).
func RegisterActivities(r sdkworker.ActivityRegistry, a *activities.Activities, control bool) {
	reg := func(fn any, name string) { r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	reg(a.ApplyStep, contract.ApplyStepName)
	reg(a.ApplyBatch, contract.ApplyBatchName)
	reg(a.Compensate, contract.CompensateName)
	if control {
		reg(a.Prepare, contract.PrepareName)
		reg(a.LoadUnits, contract.LoadUnitsName)
		reg(a.WriteStackRecord, contract.WriteStackRecordName)
		reg(a.StorePlan, contract.StorePlanName)
		reg(a.FetchPackage, contract.FetchPackageName)
		reg(a.RemoveStack, contract.RemoveStackName)
		reg(a.CheckPlan, contract.CheckPlanName)
		reg(a.ConsumeStart, contract.ConsumeStartName)
		reg(a.ConsumeAct, contract.ConsumeActName)
		reg(a.SettleParams, contract.SettleParamsName)
		reg(a.DeliverHooks, contract.DeliverHooksName)
		reg(a.WantsHooks, contract.WantsHooksName)
		reg(a.DeliverHook, contract.DeliverHookName)
		reg(a.LoadDriftTarget, contract.LoadDriftTargetName)
		reg(a.RecordDrift, contract.RecordDriftName)
		reg(a.RecordDriftRepair, contract.RecordDriftRepairName)
	}
}
