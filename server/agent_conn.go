package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/apitls"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/hostfacts"
)

// agentHTTPClient is the HTTP client an agent reaches the server's agent
// API with: https:// with the server's certificate pinned
// (CAIRN_SERVER_FINGERPRINT) or signed by CAIRN_SERVER_CA (else the
// system's roots); http:// only to loopback, or with
// CAIRN_INSECURE_HTTP=true.
func agentHTTPClient(cfg *config.Config) (*http.Client, error) {
	tc, err := apitls.ClientConfig(cfg.Server, apitls.ClientOptions{
		Fingerprint: cfg.APITLS.ServerFingerprint, CAFile: cfg.APITLS.ServerCA, AllowPlainHTTP: cfg.APITLS.InsecureHTTP,
	})
	if err != nil {
		return nil, err
	}
	return agentapi.NewHTTPClient(tc), nil
}

// reportFacts sends what the agent reads of its host to the server. A
// refusal is logged, not fatal: the facts are information for graphs,
// and an agent that cannot report them still serves its node.
func reportFacts(ctx context.Context, api *agentapi.Client, log *slog.Logger) {
	f := hostfacts.Collect(ctx, hostfacts.Sources{})
	if err := api.ReportFacts(ctx, f); err != nil {
		log.Warn("node facts not reported", "err", err)
		return
	}
	log.Info("node facts reported", "hostname", f.Hostname, "os", f.OS.ID, "version", f.OS.VersionID, "cpus", f.CPUs, "bootId", f.BootID)
}

// onRefused returns a channel closed the first time the server refuses
// api's token.
func onRefused(api *agentapi.Client) <-chan struct{} {
	ch := make(chan struct{})
	closeOnce := sync.OnceFunc(func() { close(ch) })
	api.OnRefused(closeOnce)
	return ch
}
