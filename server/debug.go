package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
	"time"
)

// serveDebug serves Go's runtime profiles (/debug/pprof/: heap, CPU,
// goroutines, allocations) on addr until ctx ends, for measuring where the
// server's time and memory go (go tool pprof http://ADDR/debug/pprof/heap).
// Profiles show the process's insides and take no token, so addr must be
// a loopback address. Cost: nothing until a profile is asked for; a CPU
// profile samples for the seconds asked. It returns the address it listens
// on.
func serveDebug(ctx context.Context, addr string, log *slog.Logger) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("CAIRN_DEBUG_ADDR %q: %w", addr, err)
	}
	if !loopbackHost(host) {
		return "", fmt.Errorf("CAIRN_DEBUG_ADDR %q: profiles are served on a loopback address only (127.0.0.1:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: debugHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("debug listener stopped", "error", err)
		}
	}()
	log.Info("profiles served", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return ln.Addr().String(), nil
}

// debugHandler serves the profiles to requests that name a loopback host:
// a page in a browser on this host can reach a loopback port under a name
// it controls (DNS rebinding), and is refused.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			h = r.Host
		}
		if !loopbackHost(h) {
			http.Error(w, "profiles are served to loopback names only", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether host (a name or an address, brackets
// allowed) is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}
