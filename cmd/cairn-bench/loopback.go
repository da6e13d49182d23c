package main

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cairn-io/cairn/internal/platform"
)

// loopback is this program's own HTTP server on 127.0.0.1: the pkger-like
// platform the tests use (internal/platform).
type loopback struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	platform *platform.Platform
}

func startLoopback() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &loopback{url: "http://" + ln.Addr().String(), platform: platform.New()}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		p := l.platform
		l.mu.Unlock()
		p.ServeHTTP(w, r)
	})
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = l.srv.Serve(ln) }()
	return l, nil
}

// freshPlatform replaces the platform with an empty one.
func (l *loopback) freshPlatform() *platform.Platform {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.platform = platform.New()
	return l.platform
}

func (l *loopback) close() { _ = l.srv.Close() }
