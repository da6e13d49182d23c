package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/internal/devserver"
	"github.com/cairn-io/cairn/server"
)

// devSettings are the variables `cairn dev` reads: it starts its own
// Temporal dev server on loopback, so the connection needs no securing.
var devSettings = []string{
	"CAIRN_TEMPORAL_ADDRESS", "CAIRN_TEMPORAL_NAMESPACE", "CAIRN_TASK_QUEUE", "CAIRN_TEMPORAL_UI_URL",
	"CAIRN_DATA_DIR", "CAIRN_DATABASE_URL", "CAIRN_API_ADDR", "CAIRN_API_TOKEN", "CAIRN_BODY_LIMIT",
	"CAIRN_UPLOAD_MAX_BYTES", "CAIRN_UPLOAD_QUOTA", "CAIRN_UPLOAD_TTL",
	"CAIRN_ALLOWED_ORIGINS", "CAIRN_CODEC_ORIGINS", "CAIRN_CODEC_BODY_LIMIT",
	"CAIRN_CODEC_KEY", "CAIRN_SECRETS_FILE", "CAIRN_KINDS_DIR", "CAIRN_FETCH_SCHEMES", "CAIRN_FETCH_DIR",
	"CAIRN_CONTROL_ROOT", "CAIRN_PARALLELISM", "CAIRN_WORKER_POLLERS", "CAIRN_NODE_POLLERS", "CAIRN_NODE_WAIT", "CAIRN_WORKER_DRAIN", "CAIRN_LOG_LEVEL", "CAIRN_LOG_FORMAT",
	"CAIRN_EVENTS_MAX_EXECUTIONS", "CAIRN_EVENTS_MAX_CLIENTS",
	"CAIRN_DEBUG_ADDR", "CAIRN_MEMORY_LIMIT", "CAIRN_PACKAGE_MANAGER", "CAIRN_SYSTEMD_ADDRESS",
	"CAIRN_FILES_DIR", "CAIRN_FILES_LIMIT", "CAIRN_HOOK_MOVE_TO_BOOTSTRAP", "CAIRN_HOOK_ERASE_NODE", "CAIRN_HOOK_COBBLER_SYNC",
}

// temporalSecuritySettings secure the connection to Temporal (TLS, mutual
// TLS, API key); every command that connects to a Temporal it did not start
// reads them.
var temporalSecuritySettings = []string{
	"CAIRN_TEMPORAL_TLS", "CAIRN_TEMPORAL_TLS_CA", "CAIRN_TEMPORAL_TLS_CERT", "CAIRN_TEMPORAL_TLS_KEY",
	"CAIRN_TEMPORAL_TLS_SERVER_NAME", "CAIRN_TEMPORAL_API_KEY", "CAIRN_TEMPORAL_API_KEY_FILE",
}

// serverSettings are the variables `cairn server` and `cairn worker` read.
var serverSettings = append(append(slices.Clone(devSettings), temporalSecuritySettings...), apiTLSServerSettings...)

// newServerCmd is `cairn server`: the HTTP API, the control plane's worker
// and the local nodes' workers.
func newServerCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the API, the control plane's worker and the local nodes",
		Args:  cobra.NoArgs,
	}
	example := cmd.Flags().String("example-cluster", "", "seed the example release, plugin and a local cluster of this id")
	load := settingFlags(cmd, serverSettings, nil)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := load()
		if err != nil {
			return err
		}
		log := newLogger(a, cfg)
		config.ApplyMemoryLimit(cfg, log)
		return server.Run(cmd.Context(), cfg, log, server.Options{API: true, ExampleCluster: *example})
	}
	return cmd
}

// newWorkerCmd is `cairn worker`: the control plane's worker and the local
// nodes without the API, to scale workers apart from the API.
func newWorkerCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the control plane's worker and the local nodes (no API)",
		Args:  cobra.NoArgs,
	}
	load := settingFlags(cmd, serverSettings, nil)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := load()
		if err != nil {
			return err
		}
		log := newLogger(a, cfg)
		config.ApplyMemoryLimit(cfg, log)
		return server.Run(cmd.Context(), cfg, log, server.Options{})
	}
	return cmd
}

// newDevCmd is `cairn dev`: everything on this machine — the Temporal dev
// server with its UI (state under the data dir, Cairn's search attributes
// registered) and `cairn server` with the example cluster.
func newDevCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run the Temporal dev server with its UI and Cairn, all on this machine",
		Args:  cobra.NoArgs,
	}
	temporalBin := cmd.Flags().String("temporal", "", "Temporal CLI binary (default: bin/temporal beside cairn, else $CAIRN_TEMPORAL_BIN, else temporal on PATH)")
	uiPort := cmd.Flags().Int("ui-port", 8233, "Temporal UI port")
	port := cmd.Flags().Int("temporal-port", 7233, "Temporal frontend port")
	example := cmd.Flags().String("example-cluster", "demo", "seed the example cluster of this id (empty: none)")
	load := settingFlags(cmd, devSettings, nil)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := load()
		if err != nil {
			return err
		}
		log := newLogger(a, cfg)
		config.ApplyMemoryLimit(cfg, log)
		if cfg.Temporal != (config.TemporalSecurity{}) {
			log.Warn("cairn dev connects to the Temporal dev server it starts on loopback, without TLS; the CAIRN_TEMPORAL_TLS* and CAIRN_TEMPORAL_API_KEY* settings are ignored")
			cfg.Temporal = config.TemporalSecurity{}
		}
		bin, err := findTemporal(*temporalBin)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return err
		}
		if cfg.ControlRoot == "" {
			cfg.ControlRoot = filepath.Join(cfg.DataDir, "control")
		}
		if cfg.FilesDir == "" {
			// copy_files sources of the development cluster.
			cfg.FilesDir = filepath.Join(cfg.DataDir, "files")
			if err := os.MkdirAll(cfg.FilesDir, 0o700); err != nil {
				return err
			}
		}
		hostPort := fmt.Sprintf("127.0.0.1:%d", *port)
		logFile, err := os.OpenFile(filepath.Join(cfg.DataDir, "temporal.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer logFile.Close()
		startCtx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
		defer cancel()
		dev, err := testsuite.StartDevServer(startCtx, testsuite.DevServerOptions{
			ExistingPath: bin,
			ClientOptions: &client.Options{
				HostPort: hostPort, Namespace: cfg.TemporalNamespace,
				Logger: sdklog.NewStructuredLogger(log.With("component", "temporal")),
			},
			DBFilename: filepath.Join(cfg.DataDir, "temporal.db"),
			EnableUI:   true,
			UIPort:     fmt.Sprint(*uiPort),
			LogLevel:   "warn",
			ExtraArgs:  devserver.Args(),
			Stdout:     logFile,
			Stderr:     logFile,
		})
		if err != nil {
			return fmt.Errorf("start the Temporal dev server: %w", err)
		}
		defer dev.Stop()
		cfg.TemporalAddress = hostPort
		cfg.TemporalUIURL = fmt.Sprintf("http://127.0.0.1:%d", *uiPort)
		return server.Run(cmd.Context(), cfg, log, server.Options{API: true, ExampleCluster: *example, Ready: func(addr string) {
			fmt.Fprintf(a.stdout, "\n  Temporal UI   %s\n  Cairn API     http://%s   (OpenAPI: http://%s/openapi.yaml)\n  Live page     http://%s/ui/\n  Data          %s\n\n"+
				"  Try:  ./bin/cairn stack create demo && ./bin/cairn apply --stack demo examples/hello/package.yaml\n"+
				"        ./bin/cairn graph execute --cluster %s --nodes node-1,node-2\n  Stop: Ctrl-C\n\n",
				cfg.TemporalUIURL, addr, addr, addr, cfg.DataDir, orDefault(*example, "CLUSTER"))
		}})
	}
	return cmd
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// findTemporal locates the Temporal CLI `make` builds into bin/.
func findTemporal(flag string) (string, error) {
	candidates := []string{flag, os.Getenv("CAIRN_TEMPORAL_BIN")}
	if self, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(self), "temporal"))
	}
	candidates = append(candidates, filepath.Join("bin", "temporal"))
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return filepath.Abs(c)
		}
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the Temporal CLI was not found: run `make bin/temporal` (it is built from the Go module proxy) or pass --temporal")
}
