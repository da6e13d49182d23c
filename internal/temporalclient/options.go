// Package temporalclient is the one place Cairn builds its Temporal clients:
// `cairn server`, `cairn worker` and `cairn agent` all dial through Dial, so
// they share one way to secure the connection — TLS with the server verified
// against a CA, a client certificate for mutual TLS (re-read when it changes
// on disk), and an API key sent through the SDK's credentials.
package temporalclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"

	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/config"
)

// Params are what a caller adds to the configuration: where the SDK logs,
// its metrics and the payload codec.
type Params struct {
	// Logger receives the SDK's logs (nil: discarded). Nothing Options
	// builds logs the API key.
	Logger         *slog.Logger
	MetricsHandler client.MetricsHandler
	DataConverter  converter.DataConverter
	// Interceptors see every unary call of the client (a worker's
	// liveness.Fence watches heartbeats through one).
	Interceptors []grpc.UnaryClientInterceptor
}

// Options are the SDK's client options for cfg: address, namespace and the
// connection's security. Every setting is checked and every file read here,
// so bad settings fail at start with an error naming the setting: a client
// certificate without its key, an unreadable or empty CA file, TLS turned
// off while TLS files are given, two sources of one API key.
func Options(cfg *config.Config, p Params) (client.Options, error) {
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := client.Options{
		HostPort:       cfg.TemporalAddress,
		Namespace:      cfg.TemporalNamespace,
		Logger:         sdklog.NewStructuredLogger(log),
		MetricsHandler: p.MetricsHandler,
		DataConverter:  p.DataConverter,
	}
	if p.DataConverter != nil {
		// With the payload codec, failure messages are sealed too.
		o.FailureConverter = codec.FailureConverter(p.DataConverter)
	}
	if len(p.Interceptors) > 0 {
		o.ConnectionOptions.DialOptions = append(o.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(p.Interceptors...))
	}
	sec := cfg.Temporal
	key, err := apiKey(sec)
	if err != nil {
		return client.Options{}, err
	}
	tlsCfg, err := tlsConfig(sec, log)
	if err != nil {
		return client.Options{}, err
	}
	switch {
	case tlsCfg != nil:
		o.ConnectionOptions.TLS = tlsCfg
	case key != "":
		// Reached only with CAIRN_TEMPORAL_TLS=false: the operator chose
		// plain text (say, to a local TLS-terminating sidecar). Without
		// this the SDK would turn TLS on by itself.
		o.ConnectionOptions.TLSDisabled = true
		log.Warn("the Temporal API key is sent without TLS (CAIRN_TEMPORAL_TLS=false)", "temporal", cfg.TemporalAddress)
	}
	if key != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	return o, nil
}

// Dial connects to Temporal with Options(cfg, p), checking the connection
// (the SDK asks the server for its capabilities), so a wrong address, CA or
// certificate fails here, not at the first workflow.
func Dial(ctx context.Context, cfg *config.Config, p Params) (client.Client, error) {
	o, err := Options(cfg, p)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s%s: %w", cfg.TemporalAddress, describe(o.ConnectionOptions.TLS), err)
	}
	return c, nil
}

// describe says how a failed connection was attempted, to tell a TLS
// mismatch from a plain-text one in the error.
func describe(t *tls.Config) string {
	switch {
	case t == nil:
		return " (plain text)"
	case t.GetClientCertificate != nil:
		return " (mutual TLS)"
	default:
		return " (TLS without a client certificate)"
	}
}
