// Package store persists Cairn's state in SQL: stacks and package snapshots,
// releases, plugins, clusters with nodes, graphs per owner and type, the
// before-states kept for compensation, plans and node history. SQLite is the
// default; PostgreSQL is used when the URL says so. Executions themselves
// live in Temporal.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-io/cairn/model"
)

// ErrNotFound is returned (wrapped) when a record does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned (wrapped) when a record already exists.
var ErrConflict = errors.New("conflict")

// Store is everything Cairn keeps outside Temporal.
type Store interface {
	Close() error
	Ping(ctx context.Context) error

	// Stacks.
	CreateStack(ctx context.Context, s *model.Stack) error // fills ID (if empty), CreatedAt, UpdatedAt
	GetStack(ctx context.Context, id string) (*model.Stack, error)
	ListStacks(ctx context.Context) ([]*model.Stack, error)
	// StacksNamed lists the stacks of one name (names need not be unique),
	// without reading the others.
	StacksNamed(ctx context.Context, name string) ([]*model.Stack, error)
	DeleteStack(ctx context.Context, id string) error
	// WriteStackRecord replaces the stack's resources, snapshot hash and
	// cluster ("" for none) as the result of execution execID. It is
	// idempotent per execID: a second call with the same execID changes
	// nothing. UpdatedAt moves only when changed is true.
	WriteStackRecord(ctx context.Context, stackID, execID string, resources []model.StackResource, snapshotHash, clusterID string, changed bool) (*model.Stack, error)

	// Drift: whether a stack's drift checks repair, and the last check
	// (the schedule is Temporal's). The record goes with its stack.
	PutDriftSettings(ctx context.Context, stackID string, repair, watch bool) error
	GetDrift(ctx context.Context, stackID string) (*DriftRecord, error)
	// WatchedStacks lists the stacks whose drift settings watch.
	WatchedStacks(ctx context.Context) ([]string, error)
	// PutDriftCheck takes the check's JSON (see SaveDriftCheck).
	PutDriftCheck(ctx context.Context, stackID string, check []byte) error
	DeleteDrift(ctx context.Context, stackID string) error
	// StackLastExecution is the execution that last wrote the stack's
	// record, whose parameters a drift check reuses.
	StackLastExecution(ctx context.Context, stackID string) (string, error)

	// Uploads: packages sent to a stack in parts (see uploads.go).
	CreateUpload(ctx context.Context, u *model.Upload) error
	GetUpload(ctx context.Context, id string) (*model.Upload, error)
	UploadPart(ctx context.Context, id string, n int) (*model.UploadPart, error)
	UploadPartInfo(ctx context.Context, id string, n int) ([]byte, error)
	PutUploadPart(ctx context.Context, id string, p UploadPartData, q UploadQuota, expiresAt time.Time) (*model.UploadPart, bool, error)
	CommitUpload(ctx context.Context, id string, parts []model.UploadPart, partKind, manifestKind string, manifest, summary []byte) (string, []byte, error)
	DeleteUpload(ctx context.Context, id string) error
	PruneUploads(ctx context.Context, t time.Time, keep time.Duration) (int, error)

	// Snapshots: immutable content by hash (sha256 hex). Put is idempotent.
	PutSnapshot(ctx context.Context, kind string, content []byte) (hash string, err error)
	GetSnapshot(ctx context.Context, hash string) (*model.Snapshot, error)

	// Step data of an execution, keyed by (execID, stepID): the state read
	// before a change (for compensation) and the step's plan/report entry.
	// Values are opaque bytes; Put is an idempotent upsert.
	PutStepData(ctx context.Context, execID, stepID, kind string, data []byte) error
	GetStepData(ctx context.Context, execID, stepID, kind string) ([]byte, error)
	ListStepData(ctx context.Context, execID, kind string) (map[string][]byte, error)
	// EachStepData reads the same rows one at a time (see sqlStore's):
	// what a reader of 100,000 steps' data uses to hold only its own form.
	EachStepData(ctx context.Context, execID, kind string, fn func(stepID string, data []byte) error) error
	// PutStepDataBatch upserts many steps' data of one kind in one
	// transaction (an execution may have 100,000 steps).
	PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error
	// DeleteStepData drops everything kept for an execution, once nothing
	// can need it any more (the execution finished and was not rolled back).
	DeleteStepData(ctx context.Context, execID string) error
	// StepDataExecutions lists, in order, up to limit ids of executions
	// that have step data, after the id after ("" from the start): a page
	// of a list that may be long.
	StepDataExecutions(ctx context.Context, after string, limit int) ([]string, error)

	// Releases, plugins, clusters.
	PutRelease(ctx context.Context, r *model.Release) error // create or update by ID
	GetRelease(ctx context.Context, id string) (*model.Release, error)
	ListReleases(ctx context.Context) ([]*model.Release, error)
	DeleteRelease(ctx context.Context, id string) error // deletes its graphs
	PutPlugin(ctx context.Context, p *model.Plugin) error
	GetPlugin(ctx context.Context, id string) (*model.Plugin, error)
	ListPlugins(ctx context.Context) ([]*model.Plugin, error)
	DeletePlugin(ctx context.Context, id string) error
	PutCluster(ctx context.Context, c *model.Cluster) error // nodes and plugin order replaced whole
	GetCluster(ctx context.Context, id string) (*model.Cluster, error)
	ListClusters(ctx context.Context) ([]*model.Cluster, error)
	// DeleteCluster refuses (ErrConflict, naming it) while a stack
	// records the cluster: its resources are on the cluster's nodes.
	DeleteCluster(ctx context.Context, id string) error
	// UpdateClusterSettings replaces a cluster's settings tree with what
	// fn makes of the stored one, atomically (PutCluster with nil
	// Settings keeps them). fn's error is returned as it is.
	UpdateClusterSettings(ctx context.Context, id string, fn func(map[string]any) (map[string]any, error)) (map[string]any, error)

	// Graphs: at most one per (layer, owner, type); Put replaces it whole.
	PutGraph(ctx context.Context, g *model.StoredGraph) error
	GetGraph(ctx context.Context, layer model.Layer, ownerID, graphType string) (*model.StoredGraph, error)
	ListGraphs(ctx context.Context, layer model.Layer, ownerID string) ([]*model.StoredGraph, error)
	DeleteGraph(ctx context.Context, layer model.Layer, ownerID, graphType string) error
	// ListAllGraphs lists every graph the filter selects, without tasks.
	ListAllGraphs(ctx context.Context, f model.GraphFilter) ([]model.GraphMeta, error)

	// Node credentials: the SHA-256 of each agent node's token. Set
	// requires an agent node of the cluster; both answer ErrNotFound for
	// anything else. A token goes with its node (PutCluster, DeleteCluster).
	SetNodeTokenHash(ctx context.Context, clusterID, nodeID string, hash []byte) error
	NodeTokenHash(ctx context.Context, clusterID, nodeID string) ([]byte, error)
	// DeleteNodeTokenHash revokes a node's token (ErrNotFound when none).
	DeleteNodeTokenHash(ctx context.Context, clusterID, nodeID string) error
	// SetNodeFacts keeps what an agent node reported of its host; the
	// clusters read back carry them as Node.Facts (ErrNotFound for
	// anything but an agent node of the cluster).
	SetNodeFacts(ctx context.Context, clusterID, nodeID string, facts *model.NodeFacts) error

	// Node history: the last successful run of a task on a node.
	RecordTaskRun(ctx context.Context, run model.TaskRun) error
	RecordTaskRuns(ctx context.Context, clusterID string, runs []model.TaskRun) error
	NodeTaskRuns(ctx context.Context, clusterID, nodeID string) (map[string]*model.TaskRun, error)
	LastTaskRun(ctx context.Context, clusterID, nodeID, taskID string) (*model.TaskRun, error)

	// Deployment data: a node's data as a graph execution saw it, read
	// back through a task run's execution id by yaql's change functions.
	// It holds cluster settings: a sealed store encrypts it.
	PutDeploymentData(ctx context.Context, clusterID, nodeID, execID string, data []byte) error
	GetDeploymentData(ctx context.Context, clusterID, nodeID, execID string) ([]byte, error)
	// PruneDeploymentData drops the data no task run refers to, but
	// execution keep's.
	PruneDeploymentData(ctx context.Context, clusterID, keep string) (int, error)

	// Principals, API tokens, labels and the audit trail (teams.go).
	Teams

	// Four eyes: a stack's or cluster's approval policy (approvals.go).
	PutApprovalPolicy(ctx context.Context, t model.ScopeKind, id string, p model.ApprovalPolicy) error
	ApprovalPolicy(ctx context.Context, t model.ScopeKind, id string) (*model.ApprovalPolicy, error)
	DeleteApprovalPolicy(ctx context.Context, t model.ScopeKind, id string) error

	// Start nonces: each start of an execution is bound to one, which its
	// workflow consumes once; so is each approval or rejection, which also
	// names its principal (nonces.go).
	PutStartNonce(ctx context.Context, nonce, execID string) error
	ConsumeStartNonce(ctx context.Context, nonce, execution, run string) error
	PutActNonce(ctx context.Context, nonce, execution, act, principal string) error
	ConsumeActNonce(ctx context.Context, nonce, execution, act, consumer string) (principal string, err error)
	PruneStartNonces(ctx context.Context, before time.Time) (int, error)
	StartNoncesSince(ctx context.Context) (since time.Time, fresh bool, err error)
}
