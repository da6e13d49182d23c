// Package api is Cairn's HTTP API: stacks and packages (pkger), releases,
// plugins and clusters with their typed graphs (Fuel), executions (Temporal
// workflows started and queried through the starter), probes, metrics and
// the OpenAPI document of all of it. Every error answers in one shape:
// {"error": {"code", "message", "details": [{"document", "path", "line",
// "column", "message"}]}}.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/ttlcache"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/store"
)

// Defaults used when Config leaves a field zero.
const (
	DefaultBodyLimit         = 10 << 20
	DefaultReadTimeout       = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultWaitTimeout       = 10 * time.Minute
	DefaultEventsPoll        = 500 * time.Millisecond
	DefaultEventsHeartbeat   = 15 * time.Second
	// DefaultEventsMaxExecutions and DefaultEventsMaxClients bound the
	// event streams: executions followed at once, clients of one.
	DefaultEventsMaxExecutions = 32
	DefaultEventsMaxClients    = 100
	DefaultReadyTimeout        = 3 * time.Second
	DefaultUploadMaxBytes      = 64 << 20
	DefaultUploadQuota         = 256 << 20
	DefaultUploadTTL           = time.Hour
)

// Config holds the API's settings.
type Config struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every route but /healthz and /readyz.
	Token string
	// Tokens are named bearer tokens (name → token), accepted besides
	// Token; the name of the one used is recorded as who approved a plan.
	Tokens map[string]string
	// OIDC, when set, also accepts ID tokens of an issuer (oidc.go).
	OIDC *OIDCConfig
	// BodyLimit caps request bodies (413 beyond it), and so each part of
	// an upload.
	BodyLimit int64
	// UploadMaxBytes bounds one upload's parts together, UploadQuota every
	// open upload's; UploadTTL is how long an upload lives after its last
	// part (see uploads.go).
	UploadMaxBytes int64
	UploadQuota    int64
	UploadTTL      time.Duration
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed to
	// call the API across origins: they get CORS answers and may send
	// state-changing requests. Any other Origin but the server's own is
	// refused on state-changing requests, with or without a token.
	AllowedOrigins []string
	// CodecOrigins are the Temporal UI's origins, allowed (with CORS) on
	// the codec endpoint only; nil means DefaultCodecOrigins.
	CodecOrigins []string
	// CodecBodyLimit caps codec requests (default DefaultCodecBodyLimit).
	CodecBodyLimit int64
	// CodecKeyID names the codec key the server seals payloads with
	// (codec.KeyID; "" for none): the agent API tells agents, which
	// refuse to serve with another key or none.
	CodecKeyID string
	// TLSFingerprint is the SHA-256 fingerprint of the certificate the
	// server serves the API with (internal/apitls.Fingerprint; "" over
	// plain HTTP), given with every node token for the agent to pin.
	TLSFingerprint string
	// Server timeouts, set on the returned echo's http.Server. Streams
	// (events, ?wait=true) lift the write deadline for themselves.
	ReadTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// WaitTimeout bounds how long ?wait=true and a dry-run wait for the
	// execution before answering 202 with it still running.
	WaitTimeout time.Duration
	// TemporalUIURL is the Temporal UI's base URL; executions link to
	// {TemporalUIURL}/namespaces/{ns}/workflows/{workflowID}/{runID}.
	TemporalUIURL string
	// TemporalNamespace is used in UI links when an execution does not name
	// its own namespace.
	TemporalNamespace string
	// AllowedURLSchemes are the schemes a stack's package URLs may use
	// (default https, http); "file" also needs FetchDir.
	AllowedURLSchemes []string
	// FetchDir confines file:// package URLs; empty refuses them.
	FetchDir string
	// FetchMaxBytes and FetchTimeout bound fetching a stack's URLs.
	FetchMaxBytes int64
	FetchTimeout  time.Duration
	// EventsPollInterval is how often the events stream polls progress;
	// EventsHeartbeat how often it sends a comment to keep proxies open.
	EventsPollInterval time.Duration
	EventsHeartbeat    time.Duration
	// EventsMaxExecutions bounds the executions whose event streams are
	// followed at once (each has one follower, whatever its clients): a
	// stream of one more answers 503. EventsMaxClients bounds the streams
	// of one execution: one more answers 429.
	EventsMaxExecutions int
	EventsMaxClients    int
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.BodyLimit <= 0 {
		c.BodyLimit = DefaultBodyLimit
	}
	if c.CodecBodyLimit <= 0 {
		c.CodecBodyLimit = DefaultCodecBodyLimit
	}
	if c.UploadMaxBytes <= 0 {
		c.UploadMaxBytes = DefaultUploadMaxBytes
	}
	if c.UploadQuota <= 0 {
		c.UploadQuota = max(DefaultUploadQuota, c.UploadMaxBytes)
	}
	def(&c.UploadTTL, DefaultUploadTTL)
	if c.CodecOrigins == nil {
		c.CodecOrigins = DefaultCodecOrigins
	}
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.WaitTimeout, DefaultWaitTimeout)
	def(&c.EventsPollInterval, DefaultEventsPoll)
	def(&c.EventsHeartbeat, DefaultEventsHeartbeat)
	if c.EventsMaxExecutions <= 0 {
		c.EventsMaxExecutions = DefaultEventsMaxExecutions
	}
	if c.EventsMaxClients <= 0 {
		c.EventsMaxClients = DefaultEventsMaxClients
	}
	if len(c.AllowedURLSchemes) == 0 {
		c.AllowedURLSchemes = []string{"https", "http"}
	}
	if c.TemporalNamespace == "" {
		c.TemporalNamespace = "default"
	}
	return c
}

// Deps are the parts the API works with.
type Deps struct {
	Store store.Store
	// Executions starts and queries workflows; without it the execution
	// routes answer 503.
	Executions Executions
	// Drift keeps stacks' drift schedules; without it the drift routes
	// answer 503.
	Drift DriftSchedules
	// DriftChanged, when set, is told a stack's drift settings changed
	// or went (the watchers re-read them at once rather than at their
	// next sweep).
	DriftChanged func(stackID string)
	// AgentWatch tells agents what to watch on their nodes and takes what
	// they saw; nil answers 503 on those routes.
	AgentWatch AgentWatches
	// Catalogue knows the kinds documents may use (the built-in kinds plus
	// those loaded from the kinds directory); nil means kinds.Builtin().
	Catalogue *kinds.Catalogue
	// Registry lists existing objects for export; nil refuses export by
	// kinds.
	Registry Lister
	// Graphs merges graph layers and checks and pins graph execution
	// requests; share the workers' one so /metrics counts every merge and
	// expansion. Nil means one over Store and Catalogue.
	Graphs *prepare.Preparer
	// Jsonnet evaluates Jsonnet documents posted to the API. Nil means
	// graphs.JsonnetProcess{}: each program runs in a child process of this
	// program, capped in memory and time, so a hostile program cannot
	// exhaust the server; the program's main must then call
	// graphs.ServeJsonnetChild first thing.
	Jsonnet graphs.JsonnetEvaluator
	// Logger receives request logs; nil discards them.
	Logger *slog.Logger
	// Ready reports whether Temporal is reachable (/readyz also pings the
	// store); nil means nothing more to check.
	Ready func(ctx context.Context) error
	// Metrics serves /metrics (the server's registry, which carries the
	// Temporal SDK's metrics). MetricsRegisterer receives the API's own
	// request metrics. When Metrics is nil the API serves a registry of its
	// own with its request metrics and the Go runtime's.
	Metrics           http.Handler
	MetricsRegisterer prometheus.Registerer
	// Codec, when set, serves the Temporal UI's codec endpoint under
	// /codec/ (it sees /encode and /decode), behind the API's Host and
	// Origin checks, token and content types, and CodecBodyLimit.
	Codec http.Handler
	// Env and Secrets are what the server's workers resolve env and
	// secret refs from (nil: the process environment; none), so an apply
	// missing a value is refused before it starts.
	Env     func(string) (string, bool)
	Secrets *expr.Secrets
}

// server carries the handlers' dependencies.
type server struct {
	cfg       Config
	store     store.Store
	exec      Executions
	drift     DriftSchedules
	catalogue *kinds.Catalogue
	registry  Lister
	graphs    *prepare.Preparer
	jsonnet   graphs.JsonnetEvaluator
	log       *slog.Logger
	ready     func(ctx context.Context) error
	fetch     *fetch.Fetcher
	grants    grantCache
	env       func(string) (string, bool)
	secrets   *expr.Secrets
	// hub shares one follower per execution among its event streams.
	hub *hub
	// parts bounds the upload parts read at once (each is parsed whole).
	parts chan struct{}
	// driftChanged is Deps.DriftChanged (never nil).
	driftChanged func(stackID string)
	// bearers are the environment's tokens (admins), tokens the store's
	// (cached), owners the executions' stacks and clusters (cached).
	bearers []bearer
	tokens  *tokenCache
	owners  *ttlcache.Cache[execOwner]
	// audit appends the audit trail.
	audit *auditor
	// rules are the routes' permission rules (authzRules).
	rules map[string]rule
	// oidc verifies ID tokens (nil without Config.OIDC).
	oidc       *oidcAuth
	agentWatch AgentWatches
}

// Handler is the API: an echo whose http.Server has cfg's timeouts set,
// so Start(addr) (or serving its Server) applies them, and what it keeps
// running behind its requests. Close it once its server is shut down.
type Handler struct {
	*echo.Echo
	audit *auditor
}

// Close writes the audit entries of the requests served so far and stops
// the audit writer; call it after the HTTP server has shut down (a request
// still served after Close writes its own entry).
func (h *Handler) Close(ctx context.Context) error { return h.audit.close(ctx) }

// New builds the API; call CheckListen before listening beyond loopback.
func New(cfg Config, deps Deps) (*Handler, error) {
	cfg = cfg.withDefaults()
	if deps.Store == nil {
		return nil, errors.New("api: a store is required")
	}
	logger := deps.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := fetch.New(fetch.Options{
		Schemes:  cfg.AllowedURLSchemes,
		Dir:      cfg.FetchDir,
		MaxBytes: cfg.FetchMaxBytes,
		Timeout:  cfg.FetchTimeout,
	})
	cat := deps.Catalogue
	if cat == nil {
		cat = kinds.Builtin()
	}
	jsonnet := deps.Jsonnet
	if jsonnet == nil {
		jsonnet = graphs.JsonnetProcess{}
	}
	s := &server{cfg: cfg, store: deps.Store, exec: deps.Executions, drift: deps.Drift, driftChanged: orNoop(deps.DriftChanged), catalogue: cat, registry: deps.Registry,
		jsonnet: jsonnet, log: logger, ready: deps.Ready, fetch: f, env: deps.Env, secrets: deps.Secrets,
		parts: make(chan struct{}, maxPartsAtOnce), agentWatch: deps.AgentWatch}
	if s.env == nil {
		s.env = os.LookupEnv
	}
	s.bearers = envBearers(cfg.Token, cfg.Tokens)
	s.tokens = newTokenCache(deps.Store, logger)
	s.owners = ttlcache.New[execOwner](ownerCacheMax, ownerCacheTTL)
	oa, err := newOIDCAuth(cfg.OIDC)
	if err != nil {
		return nil, err
	}
	s.oidc = oa
	if s.graphs = deps.Graphs; s.graphs == nil {
		s.graphs = prepare.NewPreparer(deps.Store, cat, prepare.Files{})
	}
	if s.exec != nil {
		s.hub = newHub(s.exec, logger, s.present, cfg.EventsPollInterval, cfg.EventsMaxExecutions, cfg.EventsMaxClients)
	}

	metricsHandler := deps.Metrics
	reg := deps.MetricsRegisterer
	if metricsHandler == nil {
		own := prometheus.NewRegistry()
		own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		metricsHandler = promhttp.HandlerFor(own, promhttp.HandlerOpts{})
		if reg == nil {
			reg = own
		}
	}
	apiOrigins, err := parseOrigins(cfg.AllowedOrigins)
	if err != nil {
		return nil, fmt.Errorf("allowed origins: %w", err)
	}
	codecOrigins, err := parseOrigins(cfg.CodecOrigins)
	if err != nil {
		return nil, fmt.Errorf("codec origins: %w", err)
	}
	var metrics *httpMetrics
	if reg != nil {
		if metrics, err = newHTTPMetrics(reg); err != nil {
			return nil, err
		}
		if err := registerGraphMetrics(reg, s.graphs); err != nil {
			return nil, err
		}
		if err := registerEventMetrics(reg, s.hub, s.exec); err != nil {
			return nil, err
		}
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(logger)
	e.Server.ReadTimeout = cfg.ReadTimeout
	e.Server.ReadHeaderTimeout = cfg.ReadHeaderTimeout
	e.Server.WriteTimeout = cfg.WriteTimeout
	e.Server.IdleTimeout = cfg.IdleTimeout
	e.Server.MaxHeaderBytes = 1 << 20

	e.Use(observe(logger, metrics), s.auditTrail, recoverPanics(logger))
	auth := cfg.Token != "" || len(cfg.Tokens) > 0 || cfg.OIDC != nil
	e.Use(guardBrowsers(&browserPolicy{loopbackOnly: !auth, api: apiOrigins, codec: codecOrigins}))
	s.rules = authzRules()
	e.Use(s.access(auth, s.rules))
	e.Use(limitBody(cfg.BodyLimit, cfg.CodecBodyLimit), requireBodyType())

	s.register(e, metricsHandler)
	if deps.Codec != nil {
		e.Add(http.MethodPost, CodecPrefix+"*", s.serveCodec(deps.Codec))
	}
	s.audit = newAuditor(deps.Store, logger)
	return &Handler{Echo: e, audit: s.audit}, nil
}

func (s *server) register(e *echo.Echo, metrics http.Handler) {
	e.Add(http.MethodGet, "/healthz", s.healthz)
	e.Add(http.MethodGet, "/readyz", s.readyz)
	e.Add(http.MethodGet, "/metrics", echo.WrapHandler(metrics))
	e.Add(http.MethodGet, "/openapi.yaml", serveOpenAPI)

	// Packages and stacks (pkger).
	e.Add(http.MethodPost, "/v1/packages/validate", s.validatePackage)
	e.Add(http.MethodPost, "/v1/stacks", s.createStack)
	e.Add(http.MethodGet, "/v1/stacks", s.listStacks)
	e.Add(http.MethodGet, "/v1/stacks/:id", s.getStack)
	e.Add(http.MethodDelete, "/v1/stacks/:id", s.deleteStack)
	e.Add(http.MethodPost, "/v1/stacks/:id/dry-run", s.dryRunStack)
	e.Add(http.MethodPost, "/v1/stacks/:id/apply", s.applyStack)
	e.Add(http.MethodPost, "/v1/stacks/:id/uploads", s.createUpload)
	e.Add(http.MethodGet, "/v1/stacks/:id/uploads/:upload", s.getUpload)
	e.Add(http.MethodDelete, "/v1/stacks/:id/uploads/:upload", s.deleteUpload)
	e.Add(http.MethodPut, "/v1/stacks/:id/uploads/:upload/parts/:part", s.putUploadPart)
	e.Add(http.MethodPut, "/v1/stacks/:id/drift", s.needDrift(s.putDrift))
	e.Add(http.MethodPatch, "/v1/stacks/:id/drift", s.needDrift(s.patchDrift))
	e.Add(http.MethodGet, "/v1/stacks/:id/drift", s.needDrift(s.getDrift))
	e.Add(http.MethodDelete, "/v1/stacks/:id/drift", s.needDrift(s.deleteDrift))
	e.Add(http.MethodPut, "/v1/stacks/:id/hooks", s.putHooks)
	e.Add(http.MethodGet, "/v1/stacks/:id/hooks", s.getHooks)
	e.Add(http.MethodDelete, "/v1/stacks/:id/hooks", s.deleteHooks)
	e.Add(http.MethodPost, "/v1/export", s.export)
	e.Add(http.MethodGet, "/v1/kinds", s.listKinds)
	e.Add(http.MethodGet, "/v1/kinds/:name", s.getKind)

	// Releases, plugins, clusters.
	for _, o := range owners {
		e.Add(http.MethodPost, "/v1/"+o.collection, s.createOwner(o))
		e.Add(http.MethodGet, "/v1/"+o.collection, s.listOwners(o))
		e.Add(http.MethodGet, "/v1/"+o.collection+"/:id", s.getOwner(o))
		e.Add(http.MethodPut, "/v1/"+o.collection+"/:id", s.updateOwner(o))
		e.Add(http.MethodDelete, "/v1/"+o.collection+"/:id", s.deleteOwner(o))
	}

	// Cluster settings (Fuel's editable attributes).
	e.Add(http.MethodGet, "/v1/clusters/:id/settings", s.getSettings)
	e.Add(http.MethodPut, "/v1/clusters/:id/settings", s.putSettings)
	e.Add(http.MethodPatch, "/v1/clusters/:id/settings", s.patchSettings)

	// Graphs per owner and type (Fuel).
	e.Add(http.MethodGet, "/v1/graphs", s.listAllGraphs)
	for _, o := range owners {
		e.Add(http.MethodGet, "/v1/"+o.collection+"/:id/graphs", s.listGraphs(o))
		e.Add(http.MethodGet, "/v1/"+o.collection+"/:id/graphs/:type", s.getGraph(o))
		e.Add(http.MethodPut, "/v1/"+o.collection+"/:id/graphs/:type", s.putGraph(o))
		e.Add(http.MethodDelete, "/v1/"+o.collection+"/:id/graphs/:type", s.deleteGraph(o))
	}
	e.Add(http.MethodGet, "/v1/clusters/:id/graphs/:type/merged", s.mergedGraph)

	// Executions.
	e.Add(http.MethodPost, "/v1/clusters/:id/executions", s.executeGraph)
	e.Add(http.MethodGet, "/v1/executions", s.needExec(s.listExecutions))
	e.Add(http.MethodGet, "/v1/executions/:id", s.needExec(s.getExecution))
	e.Add(http.MethodGet, "/v1/executions/:id/events", s.needExec(s.executionEvents))
	e.Add(http.MethodGet, "/v1/executions/:id/graph", s.needExec(s.executionGraph))
	e.Add(http.MethodGet, "/v1/executions/:id/steps", s.needExec(s.executionSteps))
	e.Add(http.MethodPost, "/v1/executions/:id/cancel", s.needExec(s.cancelExecution))
	e.Add(http.MethodPost, "/v1/executions/:id/retry", s.needExec(s.retryExecution))
	e.Add(http.MethodPost, "/v1/executions/:id/decision", s.needExec(s.decideExecution))
	e.Add(http.MethodPost, "/v1/executions/:id/approve", s.needExec(s.approveExecution))
	e.Add(http.MethodPost, "/v1/executions/:id/reject", s.needExec(s.rejectExecution))

	// Four-eyes settings of stacks and clusters.
	s.registerApprovalSettings(e)

	// Agents and their node tokens.
	s.registerAgent(e)

	// Principals, tokens, labels and the audit trail.
	s.registerTeams(e)
	s.registerLabels(e)

	// The live pages (static, no data without the token).
	registerUI(e)
}

// errNoExecutions answers requests that need Temporal when the server runs
// without it.
func errNoExecutions() error {
	return newError(http.StatusServiceUnavailable, "executions are unavailable: the server has no Temporal connection")
}

// needExec answers 503 when the server runs without Temporal.
func (s *server) needExec(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.exec == nil {
			return errNoExecutions()
		}
		return h(c)
	}
}

// healthz answers as long as the process serves HTTP.
func (s *server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, model.Health{Status: model.HealthOK})
}

// readyz checks the store and Temporal; 503 names what is unreachable.
func (s *server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), DefaultReadyTimeout)
	defer cancel()
	var details []model.ErrorDetail
	// The probe is open, so it names what failed but keeps the causes
	// (addresses, driver messages) for the log.
	if err := s.store.Ping(ctx); err != nil {
		requestLogger(c, s.log).Warn("store unreachable", "error", err)
		details = append(details, model.ErrorDetail{Path: "store", Message: "store unreachable"})
	}
	if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			requestLogger(c, s.log).Warn("temporal unreachable", "error", err)
			details = append(details, model.ErrorDetail{Path: "temporal", Message: "temporal unreachable"})
		}
	}
	if len(details) > 0 {
		return &Error{Status: http.StatusServiceUnavailable, Message: "not ready", Details: details}
	}
	return c.JSON(http.StatusOK, model.Health{Status: model.HealthOK})
}
