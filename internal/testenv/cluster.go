package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ClusterHost is one process of the topology, as
// `scripts/temporal-cluster.sh describe` lists it.
type ClusterHost struct {
	Name, Service string
	// GRPC and Membership are its addresses.
	GRPC, Membership string
}

// readyAddr is where the host listens once it started: its gRPC port, but
// for the worker, which serves no gRPC, its membership port.
func (h ClusterHost) readyAddr() string {
	if h.Service == "worker" {
		return h.Membership
	}
	return h.GRPC
}

// clusterPorts is how many ports from the frontend's the hosts take.
const clusterPorts = 11

// Cluster is Temporal's production topology on loopback: frontend, two
// history hosts, matching and worker, each a process of the server built
// by `make` (bin/temporal-server), on databases of their own in the test
// PostgreSQL, started by scripts/temporal-cluster.sh. Tests kill and
// restart its hosts.
type Cluster struct {
	// HostPort is the frontend's address.
	HostPort string
	// Dir holds the hosts' configs and logs (logs/HOST.log).
	Dir string

	// Hosts are the topology's processes, in the order they start.
	Hosts []ClusterHost

	script string
	env    []string
	// admin reaches the PostgreSQL the databases are in; dbName is the
	// main one's name, db a connection to it (for shard ownership).
	admin, dbName string
	db            *sql.DB

	mu    sync.Mutex
	hosts map[string]*clusterHost
}

// clusterHost is one running host process.
type clusterHost struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// TemporalServerBinary finds the Temporal server: $CAIRN_TEMPORAL_SERVER_BIN,
// else bin/temporal-server at the module root.
func TemporalServerBinary() (string, error) {
	if p := os.Getenv("CAIRN_TEMPORAL_SERVER_BIN"); p != "" {
		return p, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", "temporal-server")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("temporal server not built (run `make temporal-server`): %w", err)
	}
	return p, nil
}

// StartCluster sets the cluster up on databases of its own in the
// PostgreSQL at postgresURL (temporal_HEX and temporal_HEX_visibility),
// starts every host, frontend first, and registers the default namespace.
// It takes a few seconds once the binaries are built. Stop it with Stop.
func StartCluster(ctx context.Context, postgresURL, dir string) (*Cluster, error) {
	serverBin, err := TemporalServerBinary()
	if err != nil {
		return nil, err
	}
	cli, err := TemporalBinary()
	if err != nil {
		return nil, err
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	port, err := freePortRange(clusterPorts)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	dbName := "temporal_" + hex.EncodeToString(b[:])
	c := &Cluster{
		HostPort: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Dir:      dir,
		script:   filepath.Join(root, "scripts", "temporal-cluster.sh"),
		hosts:    map[string]*clusterHost{},
		admin:    postgresURL,
		dbName:   dbName,
		env: append(os.Environ(),
			"BIN="+filepath.Dir(serverBin), "TEMPORAL_CLI="+cli,
			"TEMPORAL_CLUSTER_DB_URL="+postgresURL, "TEMPORAL_CLUSTER_DB="+dbName,
			"TEMPORAL_CLUSTER_PORT="+strconv.Itoa(port), "TEMPORAL_CLUSTER_DIR="+dir),
	}
	if _, err := c.script1(ctx, "setup"); err != nil {
		return nil, err
	}
	out, err := c.script1(ctx, "describe")
	if err != nil {
		return nil, err
	}
	if c.Hosts, err = parseHosts(out); err != nil {
		return nil, err
	}
	u, err := url.Parse(postgresURL)
	if err != nil {
		return nil, fmt.Errorf("postgres URL: %w", err)
	}
	u.Path = "/" + dbName
	if c.db, err = sql.Open("pgx", u.String()); err != nil {
		return nil, fmt.Errorf("open %s: %w", dbName, err)
	}
	for _, h := range c.Hosts {
		if err := c.Start(ctx, h.Name); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if _, err := c.script1(ctx, "namespace"); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// script1 runs scripts/temporal-cluster.sh with one command and returns
// its standard output.
func (c *Cluster) script1(ctx context.Context, command string) (string, error) {
	cmd := exec.CommandContext(ctx, c.script, command)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("temporal-cluster.sh %s: %w\n%s%s", command, err, out, stderr.Bytes())
	}
	return string(out), nil
}

// parseHosts reads the host=… lines of `describe`.
func parseHosts(describe string) ([]ClusterHost, error) {
	var hosts []ClusterHost
	for _, line := range strings.Split(describe, "\n") {
		if !strings.HasPrefix(line, "host=") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		hosts = append(hosts, ClusterHost{Name: f["host"], Service: f["service"], GRPC: f["grpc"], Membership: f["membership"]})
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("temporal-cluster.sh describe lists no host:\n%s", describe)
	}
	return hosts, nil
}

// host finds a host by name.
func (c *Cluster) host(name string) (ClusterHost, bool) {
	for _, h := range c.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return ClusterHost{}, false
}

// Start starts host (one of Hosts) and returns once it listens; its output is appended to Dir/logs/HOST.log.
func (c *Cluster) Start(ctx context.Context, host string) error {
	spec, ok := c.host(host)
	if !ok {
		return fmt.Errorf("no host %q", host)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, running := c.hosts[host]; running {
		return fmt.Errorf("host %s runs already", host)
	}
	logFile, err := os.OpenFile(c.LogPath(host), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// The script execs the server: the process is the host itself.
	cmd := exec.Command(c.script, "run", host)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", host, err)
	}
	h := &clusterHost{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(h.done)
	}()
	c.hosts[host] = h
	addr := spec.readyAddr()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-h.done:
			delete(c.hosts, host)
			return fmt.Errorf("%s exited at start: %s (log %s)", host, cmd.ProcessState, c.LogPath(host))
		case <-ctx.Done():
			return fmt.Errorf("%s does not listen on %s: %w", host, addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Kill ends host with sig (SIGKILL: a crash; SIGTERM: an orderly stop)
// and returns once it exited.
func (c *Cluster) Kill(host string, sig syscall.Signal) error {
	c.mu.Lock()
	h, ok := c.hosts[host]
	delete(c.hosts, host)
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("host %s is not running", host)
	}
	_ = h.cmd.Process.Signal(sig)
	select {
	case <-h.done:
		return nil
	case <-time.After(time.Minute):
		_ = h.cmd.Process.Kill()
		<-h.done
		return fmt.Errorf("%s did not exit within a minute of %s", host, sig)
	}
}

// Restart stops host with SIGTERM, as a rolling restart does, and starts
// it again.
func (c *Cluster) Restart(ctx context.Context, host string) error {
	if err := c.Kill(host, syscall.SIGTERM); err != nil {
		return err
	}
	return c.Start(ctx, host)
}

// HistoryHostOf is the history host owning the shard of workflowID, read
// from the shard's record in the database (its owner's address).
func (c *Cluster) HistoryHostOf(ctx context.Context, workflowID string) (string, error) {
	var data []byte
	err := c.db.QueryRowContext(ctx, `SELECT s.data FROM current_executions e JOIN shards s ON s.shard_id = e.shard_id
		WHERE e.workflow_id = $1 LIMIT 1`, workflowID).Scan(&data)
	if err != nil {
		return "", fmt.Errorf("shard of workflow %s: %w", workflowID, err)
	}
	for _, h := range c.Hosts {
		if h.Service == "history" && bytes.Contains(data, []byte(h.GRPC)) {
			return h.Name, nil
		}
	}
	return "", fmt.Errorf("the shard of workflow %s names no history host", workflowID)
}

// LogPath is where host's output goes.
func (c *Cluster) LogPath(host string) string {
	return filepath.Join(c.Dir, "logs", host+".log")
}

// Stop kills every host still running and drops the cluster's databases.
func (c *Cluster) Stop() {
	c.mu.Lock()
	var names []string
	for name := range c.hosts {
		names = append(names, name)
	}
	c.mu.Unlock()
	for _, name := range names {
		_ = c.Kill(name, syscall.SIGKILL)
	}
	if c.db != nil {
		_ = c.db.Close()
	}
	admin, err := sql.Open("pgx", c.admin)
	if err != nil {
		return
	}
	defer admin.Close()
	for _, name := range []string{c.dbName, c.dbName + "_visibility"} {
		_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	}
}

// freePortRange finds n consecutive loopback ports nothing listens on,
// below 32768: Temporal keeps a host's membership port in a smallint
// column.
func freePortRange(n int) (int, error) {
	for range 50 {
		r, _ := rand.Int(rand.Reader, big.NewInt(int64(32768-n-20000)))
		base := 20000 + int(r.Int64())
		var held []net.Listener
		ok := true
		for p := base; p < base+n; p++ {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				ok = false
				break
			}
			held = append(held, ln)
		}
		for _, ln := range held {
			ln.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no range of free loopback ports")
}

var (
	clusterOnce sync.Once
	clusterSrv  *Cluster
	clusterErr  error
)

// TemporalCluster returns the package's shared cluster, starting it on
// first use (on the test PostgreSQL, in a directory under the system's
// temporary one). Call StopTemporalCluster from TestMain after the tests.
func TemporalCluster(t testing.TB) *Cluster {
	t.Helper()
	pg := PostgresURL(t)
	if _, err := TemporalServerBinary(); err != nil {
		missing(t, "the Temporal server", err)
	}
	clusterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-temporal-cluster-")
		if err != nil {
			clusterErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		clusterSrv, clusterErr = StartCluster(ctx, pg, dir)
	})
	if clusterErr != nil {
		t.Fatalf("Temporal cluster: %v", clusterErr)
	}
	return clusterSrv
}

// StopTemporalCluster stops the shared cluster if one was started and
// removes its directory unless keep (a failed run keeps the logs).
func StopTemporalCluster(keep bool) {
	if clusterSrv == nil {
		return
	}
	clusterSrv.Stop()
	if keep {
		fmt.Fprintf(os.Stderr, "the Temporal cluster's logs are in %s\n", clusterSrv.Dir+"/logs")
		return
	}
	_ = os.RemoveAll(clusterSrv.Dir)
}
