// Package testenv gives tests the real parts they run against: a Temporal
// dev server started from the CLI binary that `make` builds into ./bin, and
// a PostgreSQL URL from the throwaway cluster `make test` starts. When a part
// is missing the test fails, unless the developer runs outside `make test`
// and has not asked for it (CAIRN_REQUIRE_ALL unset), in which case it skips
// with the reason; CI sets CAIRN_REQUIRE_ALL=1 so nothing skips there.
package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/internal/devserver"
)

// TemporalBinary finds the Temporal CLI: $CAIRN_TEMPORAL_BIN, else bin/temporal
// at the module root.
func TemporalBinary() (string, error) {
	if p := os.Getenv("CAIRN_TEMPORAL_BIN"); p != "" {
		return p, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", "temporal")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("temporal CLI not built (run `make bin/temporal`): %w", err)
	}
	return p, nil
}

// ModuleRoot walks up from the working directory to the folder with go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func missing(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
		t.Fatalf("%s is required here (CAIRN_REQUIRE_ALL is set): %v", what, err)
	}
	t.Skipf("%s unavailable (run through `make test`): %v", what, err)
}

// DevServer is a running Temporal dev server shared by the tests of one
// package.
type DevServer struct {
	Server   *testsuite.DevServer
	HostPort string
	Client   client.Client
}

var (
	devOnce sync.Once
	devSrv  *DevServer
	devErr  error
)

// Temporal returns the package's shared dev server, starting it on first
// use. Call StopTemporal from TestMain to stop it after the tests.
func Temporal(t testing.TB) *DevServer {
	t.Helper()
	devOnce.Do(func() { devSrv, devErr = startDevServer() })
	if devErr != nil {
		missing(t, "Temporal dev server", devErr)
	}
	return devSrv
}

func startDevServer() (*DevServer, error) {
	bin, err := TemporalBinary()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out io.Writer = io.Discard
	if os.Getenv("CAIRN_TEST_TEMPORAL_LOG") != "" {
		out = os.Stderr
	}
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin,
		LogLevel:     "error",
		ExtraArgs:    devserver.Args(),
		Stdout:       out,
		Stderr:       out,
	})
	if err != nil {
		return nil, fmt.Errorf("start dev server %s: %w", bin, err)
	}
	return &DevServer{Server: srv, HostPort: srv.FrontendHostPort(), Client: srv.Client()}, nil
}

// StopTemporal stops the shared dev server if one was started.
func StopTemporal() {
	if devSrv != nil {
		_ = devSrv.Server.Stop()
	}
}

// PostgresURL returns the URL of the throwaway PostgreSQL that `make test`
// starts ($CAIRN_TEST_POSTGRES_URL). Each caller should use its own schema
// or database; see store tests.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("CAIRN_TEST_POSTGRES_URL")
	if u == "" {
		missing(t, "PostgreSQL", fmt.Errorf("CAIRN_TEST_POSTGRES_URL is not set"))
	}
	return u
}
