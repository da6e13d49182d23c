package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/ttlcache"
	"github.com/cairn-io/cairn/internal/webhook"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
)

// StepData is the part of the store the step activities (ApplyStep,
// ApplyBatch, Compensate) read and write: an execution's step records. On
// the server it is the store; an agent reaches it through the server's
// agent API, which answers only for its own node's steps.
type StepData interface {
	GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error)
	PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error
	PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error
}

// Deps are what the activities work with.
type Deps struct {
	// Store serves the control plane's activities; nil on an agent.
	Store store.Store
	// Steps serves the step activities; nil means Store.
	Steps    StepData
	Registry *providers.Registry
	// Packages parses snapshots; only the control plane's Prepare needs it.
	Packages prepare.PackageLoader
	// Secrets resolves secret refs; nil means none are available.
	Secrets *expr.Secrets
	// Env looks up env refs; nil means the process environment.
	Env func(string) (string, bool)
	// Node is where this worker applies steps: the control plane (Name
	// "", Root "" or a confining root) or one node with its own root.
	// Cluster is the node's cluster. A worker runs only units meant for
	// it (see checkPlacement).
	Node    providers.Node
	Cluster string
	Logger  *slog.Logger
	// StepConcurrency is how many steps of one batch converge at once
	// (default DefaultStepConcurrency).
	StepConcurrency int
	// Fetch reads a stack's URLs (FetchPackage); nil refuses them.
	Fetch *fetch.Fetcher
	// Catalogue validates packages read from URLs; nil means
	// kinds.Builtin().
	Catalogue *kinds.Catalogue
	// Jsonnet evaluates Jsonnet read from URLs; nil evaluates in this
	// process (graphs.InProcessJsonnet).
	Jsonnet graphs.JsonnetEvaluator
	// BeforeStateLimit is the most bytes one step's before-state (what a
	// rollback restores byte-exactly: file bytes, an object's body, an
	// external config) may take in the store; a larger one is not kept
	// and the step has no byte-exact rollback. 0 means
	// DefaultBeforeStateLimit.
	BeforeStateLimit int
	// Schedules deletes the drift schedule of a stack that is gone (see
	// RemoveStack, LoadDriftTarget); nil on a node worker, which never
	// runs those.
	Schedules client.ScheduleClient
	// HooksAllowPrivate lets webhooks be delivered to loopback, private,
	// link-local and unspecified addresses, which are refused by default
	// (see webhook.NewClient).
	HooksAllowPrivate bool
}

// DefaultStepConcurrency is the default of Deps.StepConcurrency.
const DefaultStepConcurrency = 8

// DefaultBeforeStateLimit is the default of Deps.BeforeStateLimit, 8 MiB
// per step: large enough for configuration files and API objects, small
// enough that a package of big files cannot fill the store with copies.
const DefaultBeforeStateLimit = 8 << 20

// Activities holds Cairn's activities; register its methods under the
// names in this package.
type Activities struct {
	d   Deps
	log *slog.Logger
	// snapshots loads (and keeps a few) parsed package snapshots.
	snapshots *prepare.Snapshots
	// params keeps, on an agent, the parameters of its executions.
	params *ttlcache.Cache[model.ApplyParams]
	// hookHTTP delivers webhooks (see DeliverHook).
	hookHTTP *http.Client
}

// New returns the activities over deps.
func New(d Deps) *Activities {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if d.StepConcurrency <= 0 {
		d.StepConcurrency = DefaultStepConcurrency
	}
	if d.Steps == nil && d.Store != nil {
		d.Steps = d.Store
	}
	if d.BeforeStateLimit <= 0 {
		d.BeforeStateLimit = DefaultBeforeStateLimit
	}
	var snapshots prepare.SnapshotReader
	if d.Store != nil {
		snapshots = d.Store
	}
	return &Activities{d: d, log: log, snapshots: prepare.NewSnapshots(snapshots, d.Packages),
		params:   ttlcache.New[model.ApplyParams](paramsCacheEntries, paramsCacheTTL),
		hookHTTP: webhook.NewClient(d.HooksAllowPrivate)}
}

// configError is an application error no retry can fix.
func configError(msg string, details ...any) error {
	return temporal.NewNonRetryableApplicationError(msg, contract.ConfigErrorType, nil, details...)
}

// loadJSON reads one step-data record into v.
func (a *Activities) loadJSON(ctx context.Context, execID, stepID, kind string, v any) error {
	raw, err := a.d.Steps.GetStepData(ctx, execID, stepID, kind)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s record of %s: %w", kind, stepID, err)
	}
	return nil
}

// found reports whether err is anything but "not found", returning the
// error to propagate.
func notFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
