package server

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/fetch"
	"github.com/cairn-io/cairn/internal/liveness"
	"github.com/cairn-io/cairn/internal/temporalclient"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/worker"
)

// Runtime is what the server's workers and `cairn agent` are built from,
// alike, out of one configuration, so the two cannot drift: how to reach
// Temporal (TLS and API key settings, payloads sealed with the codec key
// when one is set), the codec key itself, and the workers' dependencies but
// the store (the kind catalogue, the providers' registry, secrets, the
// fetcher of stacks' URLs, Jsonnet and the logger).
type Runtime struct {
	cfg *config.Config
	// Temporal is the Temporal client's settings but the address and
	// security, which come from the configuration (see Dial).
	Temporal temporalclient.Params
	// Key is the codec key (nil when none is set): it seals Temporal
	// payloads, and the server's stored step data.
	Key  []byte
	Deps worker.Deps
}

// NewRuntime reads the configuration every Cairn process shares.
func NewRuntime(cfg *config.Config, log *slog.Logger) (*Runtime, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The fence watches the heartbeats of the client Dial makes, for the
	// workers built from Deps (server's and agent's alike).
	fence := liveness.NewFence()
	rt := &Runtime{cfg: cfg, Temporal: temporalclient.Params{Logger: log.With("component", "temporal"),
		Interceptors: []grpc.UnaryClientInterceptor{fence.Interceptor}}}
	if cfg.CodecKey != "" {
		key, err := codec.ParseKey(cfg.CodecKey)
		if err != nil {
			return nil, fmt.Errorf("CAIRN_CODEC_KEY: %w", err)
		}
		if rt.Temporal.DataConverter, err = codec.DataConverter(key); err != nil {
			return nil, err
		}
		rt.Key = key
	}
	// Bad TLS or API key settings fail here, at start, naming the setting.
	if _, err := temporalclient.Options(cfg, rt.Temporal); err != nil {
		return nil, err
	}
	cat, err := Catalogue(cfg.KindsDir)
	if err != nil {
		return nil, err
	}
	// Graphs using a provisioning hook validate only when it is configured.
	if cat, err = cat.WithHooks(cfg.HookNames()...); err != nil {
		return nil, err
	}
	secrets, err := expr.LoadSecrets(cfg.SecretsFile)
	if err != nil {
		return nil, err
	}
	registry := worker.DefaultRegistry(cat, nil)
	worker.RegisterFuel(registry, cfg.RebootCommand, cfg.Hooks)
	worker.RegisterExternal(registry, providers.ExternalOptions{PlugsDir: cfg.PlugsDir})
	registry.Register(providers.NewService(cfg.SystemdAddress))
	registry.Register(providers.NewPackage(providers.PackageOptions{Manager: cfg.PackageManager}))
	if rt.Key != nil {
		// Every worker holding the codec key fingerprints secret content
		// alike; without it each process keys its own.
		registry.WithFingerprintKey(codec.DeriveKey(rt.Key, codec.PurposeFingerprint))
	}
	rt.Deps = worker.Deps{
		Catalogue: cat, Registry: registry, Secrets: secrets, Logger: log,
		// The worker reads stacks' URLs under the rules the API checks them
		// by; Jsonnet from a URL is evaluated in a child process, as posted
		// Jsonnet.
		Fetch:             fetch.New(fetch.Options{Schemes: cfg.FetchSchemes, Dir: cfg.FetchDir}),
		Jsonnet:           graphs.JsonnetProcess{},
		HooksAllowPrivate: cfg.HooksAllowPrivate,
		Fence:             fence,
	}
	return rt, nil
}

// Dial connects to Temporal as the configuration says, with rt's settings.
func (rt *Runtime) Dial(ctx context.Context) (client.Client, error) {
	return temporalclient.Dial(ctx, rt.cfg, rt.Temporal)
}
