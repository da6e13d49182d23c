package main

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cairn-io/cairn/internal/platform"
)

// loopback is this program's own HTTP server on 127.0.0.1: the pkger-like
// platform the tests use (internal/platform) at its root, and the parts of
// packages too large for one request under /packages/.
type loopback struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	platform *platform.Platform
	parts    map[string][]byte
}

func startLoopback() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &loopback{url: "http://" + ln.Addr().String(), parts: map[string][]byte{}, platform: platform.New()}
	mux := http.NewServeMux()
	mux.HandleFunc("/packages/", func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		data, ok := l.parts[r.URL.Path]
		l.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(data)
	})
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

// serveParts serves each part under /packages/<name>/ and returns their
// URLs; parts served before are dropped.
func (l *loopback) serveParts(name string, parts [][]byte) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts = map[string][]byte{}
	urls := make([]string, len(parts))
	for i, p := range parts {
		path := fmt.Sprintf("/packages/%s/part-%03d.yaml", name, i)
		l.parts[path] = p
		urls[i] = l.url + path
	}
	return urls
}

func (l *loopback) close() { _ = l.srv.Close() }
