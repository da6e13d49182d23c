// Package server is the composition root of `cairn server`, above every
// other package and imported only by cmd/: it assembles the Temporal client (with the
// payload codec and the SDK's metrics), the store, the kind catalogue and
// providers, the control plane's worker, the local nodes' workers and the
// HTTP API, and runs them until the context ends.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/retention"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// Options say which parts run.
type Options struct {
	// API serves the HTTP API (false for `cairn worker`).
	API bool
	// ExampleCluster seeds the store with the example release, plugin and
	// local cluster from examples/ when they are missing.
	ExampleCluster string
	// Ready, when set, is called with the API's address once everything
	// serves.
	Ready func(apiAddr string)
}

// Run serves until ctx ends, then shuts down in order.
func Run(ctx context.Context, cfg *config.Config, log *slog.Logger, o Options) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var tlsConfig *tls.Config
	fingerprint := ""
	if o.API {
		if err := api.CheckListen(cfg.APIAddr, cfg.APIToken != "" || len(cfg.APITokens) > 0 || cfg.OIDC != nil); err != nil {
			return err
		}
		var err error
		if tlsConfig, fingerprint, err = apiTLS(cfg, log); err != nil {
			return err
		}
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		// Histograms, not summaries: a summary keeps quantile streams per
		// series, and the SDK's latency series are per task queue, so with
		// one queue a node they cost ~130 KB a node (130 MB on 1,000
		// nodes); a histogram's buckets are a few hundred bytes, and add
		// up across servers.
		CachedReporter: tallyprom.NewReporter(tallyprom.Options{Registerer: metrics,
			DefaultTimerType: tallyprom.HistogramTimerType}),
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	defer closer.Close()

	rt, err := NewRuntime(cfg, log)
	if err != nil {
		return err
	}
	rt.Temporal.MetricsHandler = sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope))
	key := rt.Key
	c, err := rt.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		dbURL = store.DefaultURL(cfg.DataDir)
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if key != nil {
		if st, err = store.WithSealer(st, key); err != nil {
			return err
		}
	}

	if cfg.ControlRoot != "" {
		if err := os.MkdirAll(cfg.ControlRoot, 0o755); err != nil {
			return fmt.Errorf("control root: %w", err)
		}
	}
	deps := rt.Deps
	deps.Store = st
	cat, registry := deps.Catalogue, deps.Registry
	wopts := worker.Options{TaskQueue: cfg.TaskQueue, Pollers: cfg.WorkerPollers, NodePollers: cfg.NodePollers, Root: cfg.ControlRoot, Drain: cfg.WorkerDrain,
		BeforeStateLimit: cfg.BeforeStateLimit, FilesDir: cfg.FilesDir, FilesLimit: cfg.FilesLimit}
	// One preparer of graph executions: the API checks and pins requests
	// with it, the worker's activities prepare them, /metrics counts both.
	deps.Graphs = prepare.NewPreparer(st, cat, prepare.Files{Dir: cfg.FilesDir, Limit: cfg.FilesLimit})

	st0 := starter.New(c, starter.Config{
		TaskQueue: cfg.TaskQueue, Namespace: cfg.TemporalNamespace, UIURL: cfg.TemporalUIURL,
		Store: st, DataConverter: rt.Temporal.DataConverter, Parallelism: cfg.Parallelism, NodeWait: cfg.NodeWait,
	})
	if err := st0.EnsureSearchAttributes(ctx); err != nil {
		return fmt.Errorf("register search attributes: %w", err)
	}
	if o.ExampleCluster != "" {
		if err := SeedExample(ctx, st, cat, o.ExampleCluster); err != nil {
			return fmt.Errorf("example cluster: %w", err)
		}
	}

	w, err := worker.New(c, deps, wopts)
	if err != nil {
		return err
	}
	worker.RegisterGraph(w, deps, wopts)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	// Step data (before-states, outputs, plans) of executions closed
	// longer than the retention ago is deleted.
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		retention.New(st, c, cfg.StepDataRetention, log).WithAudit(cfg.AuditRetention).Run(sweepCtx)
	}()
	defer func() { stopSweep(); <-swept }()
	nodes := worker.NewLocalNodes(c, deps, cfg.DataDir, wopts)
	// On shutdown every worker stops polling at once and drains its steps
	// in flight (within cfg.WorkerDrain) while the API shuts down, so the
	// other servers take over without waiting for this one.
	stopWorkers := sync.OnceFunc(func() {
		log.Info("workers stopping", "drain", cfg.WorkerDrain)
		var wg sync.WaitGroup
		wg.Go(w.Stop)
		wg.Go(nodes.Stop)
		wg.Wait()
		log.Info("workers stopped")
	})
	defer stopWorkers()
	go func() { _ = nodes.Run(ctx, 5*time.Second) }()
	// Watchers of the stacks whose drift settings say watch, re-armed
	// from the store now and kept in step with it.
	watcher := NewWatcher(st, st0, WatchOptions{ControlRoot: cfg.ControlRoot, NodeRoot: nodes.NodeRoot, SystemdAddress: cfg.SystemdAddress}, log)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if err := watcher.Run(watchCtx); err != nil {
			log.Error("watchers stopped", "err", err)
		}
	}()
	defer func() { stopWatch(); <-watched }()
	log.Info("worker polling", "queue", cfg.TaskQueue, "temporal", cfg.TemporalAddress)
	go watchMemoryLimit(ctx, log, time.Minute)
	if cfg.DebugAddr != "" {
		if _, err := serveDebug(ctx, cfg.DebugAddr, log); err != nil {
			return err
		}
	}

	if !o.API {
		if o.Ready != nil {
			o.Ready("")
		}
		<-ctx.Done()
		stopWorkers()
		return nil
	}

	metricsHandler := promhttp.HandlerFor(metrics, promhttp.HandlerOpts{})
	var codecHandler http.Handler
	keyID := ""
	if key != nil {
		keyID = codec.KeyID(key)
		// CORS and the token are the API's: the handler sends no headers
		// of its own.
		if codecHandler, err = codec.Handler(key, codec.HandlerOptions{}); err != nil {
			return err
		}
	}
	var oidcCfg *api.OIDCConfig
	if o := cfg.OIDC; o != nil {
		oidcCfg = &api.OIDCConfig{Issuer: o.Issuer, Audience: o.Audience, NameClaim: o.NameClaim, GroupsClaim: o.GroupsClaim, Groups: o.Groups}
	}
	e, err := api.New(api.Config{
		OIDC: oidcCfg, Token: cfg.APIToken, Tokens: cfg.APITokens, BodyLimit: cfg.BodyLimit, TemporalUIURL: cfg.TemporalUIURL,
		TemporalNamespace: cfg.TemporalNamespace, AllowedURLSchemes: cfg.FetchSchemes, FetchDir: cfg.FetchDir,
		AllowedOrigins: cfg.AllowedOrigins, CodecOrigins: cfg.CodecOrigins, CodecBodyLimit: cfg.CodecBodyLimit,
		EventsMaxExecutions: cfg.EventsMaxExecutions, EventsMaxClients: cfg.EventsMaxClients,
		CodecKeyID: keyID, TLSFingerprint: fingerprint,
		UploadMaxBytes: cfg.UploadMaxBytes, UploadQuota: cfg.UploadQuota, UploadTTL: cfg.UploadTTL,
	}, api.Deps{
		Store: st, Executions: st0, Drift: st0, DriftChanged: watcher.Changed, AgentWatch: watcher, Catalogue: cat, Registry: NewExportLister(registry), Graphs: deps.Graphs, Logger: log,
		Ready: func(ctx context.Context) error {
			_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
		Metrics: metricsHandler, MetricsRegisterer: metrics, Codec: codecHandler,
		Env: deps.Env, Secrets: deps.Secrets,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.APIAddr, err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	srv := e.Server
	srv.Handler = e
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	log.Info("API listening", "addr", ln.Addr().String(), "auth", cfg.APIToken != "" || len(cfg.APITokens) > 0 || cfg.OIDC != nil,
		"tls", tlsConfig != nil, "fingerprint", fingerprint)
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err := <-serveDone:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("API server: %w", err)
		}
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		stopWorkers()
	}()
	shutdown, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if err := e.Close(shutdown); err != nil {
		log.Error("shutting down", "error", err)
	}
	<-stopped
	return nil
}

// Catalogue is the built-in catalogue plus the kinds defined in dir.
func Catalogue(dir string) (*kinds.Catalogue, error) {
	cat := kinds.Builtin()
	if dir == "" {
		return cat, nil
	}
	defined, err := kinds.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("kinds dir %s: %w", dir, err)
	}
	cat = cat.Clone()
	if err := cat.AddAll(defined); err != nil {
		return nil, fmt.Errorf("kinds dir %s: %w", filepath.Clean(dir), err)
	}
	return cat, nil
}
