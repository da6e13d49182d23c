// Package server is the composition root of `cairn server`, above every
// other package and imported only by cmd/: it assembles the Temporal client (with the
// payload codec and the SDK's metrics), the store, the kind catalogue and
// providers, the control plane's worker, the local nodes' workers and the
// HTTP API, and runs them until the context ends.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
	sdklog "go.temporal.io/sdk/log"

	"github.com/cairn-io/cairn/api"
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/kinds"
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
	if o.API {
		if err := api.CheckListen(cfg.APIAddr, cfg.APIToken); err != nil {
			return err
		}
	}
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  tallyprom.NewReporter(tallyprom.Options{Registerer: metrics}),
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	defer closer.Close()

	copts := client.Options{
		HostPort:       cfg.TemporalAddress,
		Namespace:      cfg.TemporalNamespace,
		Logger:         sdklog.NewStructuredLogger(log.With("component", "temporal")),
		MetricsHandler: sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)),
	}
	var key []byte
	if cfg.CodecKey != "" {
		var err error
		if key, err = codec.ParseKey(cfg.CodecKey); err != nil {
			return fmt.Errorf("CAIRN_CODEC_KEY: %w", err)
		}
		if copts.DataConverter, err = codec.DataConverter(key); err != nil {
			return err
		}
	}
	c, err := client.DialContext(ctx, copts)
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", cfg.TemporalAddress, err)
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

	cat, err := Catalogue(cfg.KindsDir)
	if err != nil {
		return err
	}
	secrets, err := expr.LoadSecrets(cfg.SecretsFile)
	if err != nil {
		return err
	}
	if cfg.ControlRoot != "" {
		if err := os.MkdirAll(cfg.ControlRoot, 0o755); err != nil {
			return fmt.Errorf("control root: %w", err)
		}
	}
	registry := worker.DefaultRegistry(cat, nil)
	if key != nil {
		// Every worker holding the codec key fingerprints secret content
		// alike; without it each process keys its own.
		registry.WithFingerprintKey(codec.DeriveKey(key, codec.PurposeFingerprint))
	}
	// The worker reads stacks' URLs under the rules the API checks them by;
	// Jsonnet from a URL is evaluated in a child process, as posted Jsonnet.
	fetcher := fetch.New(fetch.Options{Schemes: cfg.FetchSchemes, Dir: cfg.FetchDir})
	deps := worker.Deps{Store: st, Registry: registry, Catalogue: cat, Secrets: secrets, Logger: log,
		Fetch: fetcher, Jsonnet: graphs.JsonnetProcess{}}
	wopts := worker.Options{TaskQueue: cfg.TaskQueue, Pollers: cfg.WorkerPollers, Root: cfg.ControlRoot}

	st0 := starter.New(c, starter.Config{
		TaskQueue: cfg.TaskQueue, Namespace: cfg.TemporalNamespace, UIURL: cfg.TemporalUIURL,
		Store: st, DataConverter: copts.DataConverter, Parallelism: cfg.Parallelism,
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
	defer w.Stop()
	nodes := worker.NewLocalNodes(c, deps, cfg.DataDir, wopts)
	defer nodes.Stop()
	nodesDone := make(chan error, 1)
	go func() { nodesDone <- nodes.Run(ctx, 5*time.Second) }()
	log.Info("worker polling", "queue", cfg.TaskQueue, "temporal", cfg.TemporalAddress)

	if !o.API {
		if o.Ready != nil {
			o.Ready("")
		}
		<-ctx.Done()
		return nil
	}

	metricsHandler := promhttp.HandlerFor(metrics, promhttp.HandlerOpts{})
	e, err := api.New(api.Config{
		Token: cfg.APIToken, BodyLimit: cfg.BodyLimit, TemporalUIURL: cfg.TemporalUIURL,
		TemporalNamespace: cfg.TemporalNamespace, AllowedURLSchemes: cfg.FetchSchemes, FetchDir: cfg.FetchDir,
	}, api.Deps{
		Store: st, Executions: st0, Catalogue: cat, Registry: registry, Logger: log,
		Ready: func(ctx context.Context) error {
			_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
		Metrics: metricsHandler, MetricsRegisterer: metrics,
	})
	if err != nil {
		return err
	}
	handler := http.Handler(e)
	if key != nil {
		codecHandler, err := codec.Handler(key, codec.HandlerOptions{AllowOrigin: cfg.TemporalUIURL})
		if err != nil {
			return err
		}
		handler = withCodec(e, codecHandler, cfg.APIToken)
	}
	ln, err := net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.APIAddr, err)
	}
	srv := e.Server
	srv.Handler = handler
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	log.Info("API listening", "addr", ln.Addr().String(), "auth", cfg.APIToken != "")
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
	shutdown, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(shutdown)
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

// withCodec serves the Temporal UI's codec endpoint under /codec/, behind
// the API token when one is set.
func withCodec(api http.Handler, codecHandler http.Handler, token string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/codec/", http.StripPrefix("/codec", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Method != http.MethodOptions &&
			subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
			http.Error(w, `{"error":{"code":"unauthorized","message":"missing or wrong bearer token"}}`, http.StatusUnauthorized)
			return
		}
		codecHandler.ServeHTTP(w, r)
	})))
	return mux
}
