package deploy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// systemdPath is the PATH systemd gives a service.
const systemdPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// TestPackages builds the .deb and .rpm with `make packages`, checks the
// .rpm's contents, installs the .deb on this host (removed again at the
// end), checks what its scripts made and its units with systemd-analyze,
// then, systemd not being PID 1 here, starts the server and an agent as
// their installed units say (ExecStart, EnvironmentFile, User,
// WorkingDirectory): the agent gets its token from `cairn node token`,
// reaches the server over TLS pinning the certificate's fingerprint,
// reports its host's facts and runs a graph step that reads them. A
// revoked token is then refused at once.
func TestPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs packages")
	}
	for _, p := range []string{"make", "dpkg", "dpkg-deb", "dpkg-query", "rpm", "systemd-analyze", "useradd"} {
		testenv.Program(t, p)
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatal("installing the .deb needs root (CAIRN_REQUIRE_ALL is set)")
		}
		t.Skip("installing the .deb needs root")
	}
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "cairn").Output(); err == nil && strings.Contains(string(out), "installed") {
		t.Fatalf("a cairn package is already installed on this host (%s): this test installs and purges its own, remove that one first", out)
	}
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	dist := t.TempDir()
	// The binary built as every test package builds it (seconds with the
	// build cache other tests filled), not make's static build with its
	// own flags, which would compile everything again.
	build := exec.Command("make", "-C", root, "packages", "DIST="+dist, "PKG_BINARY="+testenv.BuildCairn(t))
	out, err := build.CombinedOutput()
	require.NoError(t, err, "make packages:\n%s", out)
	deb := glob1(t, filepath.Join(dist, "cairn_*.deb"))
	rpm := glob1(t, filepath.Join(dist, "cairn-*.rpm"))

	wantFiles := []string{
		"/usr/bin/cairn", "/usr/lib/systemd/system/cairn-agent.service", "/usr/lib/systemd/system/cairn-agent@.service",
		"/usr/lib/systemd/system/cairn-server.service", "/etc/cairn/agent.env", "/etc/cairn/server.env",
	}
	t.Run("rpm contents", func(t *testing.T) {
		files := run(t, "rpm", "-qp", "--list", rpm)
		for _, f := range wantFiles {
			assert.Contains(t, strings.Fields(files), f)
		}
		assert.ElementsMatch(t, []string{"/etc/cairn/agent.env", "/etc/cairn/server.env"}, strings.Fields(run(t, "rpm", "-qp", "--configfiles", rpm)))
		dump := run(t, "rpm", "-qp", "--dump", rpm)
		assert.Regexp(t, `(?m)^/etc/cairn/agent\.env \d+ \d+ [0-9a-f]+ 0100600 root root 1 `, dump, "agent.env: mode 0600, a config file")
		assert.Regexp(t, `(?m)^/usr/bin/cairn \d+ \d+ [0-9a-f]+ 0100755 root root 0 `, dump)
		assert.Contains(t, run(t, "rpm", "-qp", "--scripts", rpm), "useradd --system")
	})

	t.Run("deb contents", func(t *testing.T) {
		list := run(t, "dpkg-deb", "--contents", deb)
		for _, f := range wantFiles {
			assert.Contains(t, list, "."+f)
		}
		assert.Equal(t, "/etc/cairn/agent.env\n/etc/cairn/server.env\n", run(t, "dpkg-deb", "--info", deb, "conffiles"))
	})

	// Install for real: the package's scripts make the user and the
	// directories; the purge at the end removes what it installed.
	_, userErr := user.Lookup("cairn")
	hadUser := userErr == nil
	run(t, "dpkg", "--install", deb)
	t.Cleanup(func() {
		if out, err := exec.Command("dpkg", "--purge", "cairn").CombinedOutput(); err != nil {
			t.Errorf("dpkg --purge cairn: %v\n%s", err, out)
		}
		if !hadUser {
			_ = exec.Command("userdel", "cairn").Run()
			_ = exec.Command("groupdel", "cairn").Run()
		}
		for _, p := range []string{"/usr/bin/cairn", "/var/lib/cairn", "/etc/cairn"} {
			_, err := os.Stat(p)
			assert.True(t, os.IsNotExist(err), "%s is still there after the purge", p)
		}
	})

	t.Run("postinstall", func(t *testing.T) {
		u, err := user.Lookup("cairn")
		require.NoError(t, err, "the package made no cairn user")
		checkOwner(t, "/var/lib/cairn", u.Username, u.Username, 0o700)
		checkOwner(t, "/etc/cairn/agent.env", "root", "root", 0o600)
		checkOwner(t, "/etc/cairn/server.env", "root", "cairn", 0o640)
		assert.Contains(t, run(t, "dpkg-query", "-W", "-f=${Conffiles}", "cairn"), "/etc/cairn/agent.env")
	})

	t.Run("systemd-analyze verify", func(t *testing.T) {
		for _, u := range []string{"cairn-server.service", "cairn-agent.service", "cairn-agent@web-1.service"} {
			cmd := exec.Command("systemd-analyze", "verify", u)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "systemd-analyze verify %s:\n%s", u, out)
			require.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify %s warns", u)
		}
	})

	dev := testenv.Temporal(t)
	port := freePort(t)
	const apiToken = "pkg-test-api-token"
	// The server's settings, as an operator would write them: TLS on
	// loopback too (beyond it, it is the default).
	writeFile(t, "/etc/cairn/server.env", fmt.Sprintf(
		"CAIRN_API_ADDR=127.0.0.1:%d\nCAIRN_API_TLS=true\nCAIRN_API_TOKEN=%s\nCAIRN_TEMPORAL_ADDRESS=%s\nCAIRN_TASK_QUEUE=pkg-test-%d\nCAIRN_LOG_FORMAT=text\n",
		port, apiToken, dev.HostPort, time.Now().UnixNano()), 0o640)
	server := startUnit(t, "/usr/lib/systemd/system/cairn-server.service")
	certFile := "/var/lib/cairn/tls/api-cert.pem"
	serverURL := fmt.Sprintf("https://127.0.0.1:%d", port)
	api := waitForAPI(t, server, serverURL, certFile, apiToken)
	fingerprint := certFingerprint(t, certFile)

	ctx := context.Background()
	cluster := "pkg-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err = api.CreateCluster(ctx, model.ClusterInput{ID: cluster, Name: cluster, Nodes: []model.Node{
		{ID: "web-1", Name: "web-1", Roles: []string{"web"}, Mode: model.NodeAgent,
			Attributes: map[string]any{"facts": map[string]any{"cpus": 999}}},
	}})
	require.NoError(t, err)
	_, err = api.PutGraph(ctx, model.LayerCluster, cluster, "default", client.Document{Format: "yaml", Data: []byte(`
- id: whoami
  type: shell
  roles: [web]
  condition: {yaql_exp: "$.facts.memoryBytes > 0 and len($.facts.os.id) > 0"}
  parameters:
    cmd: {yaql_exp: "concat('echo ', $.facts.hostname, ' ', toJson($.facts.cpus), ' > whoami.txt')"}
`)})
	require.NoError(t, err)

	// `cairn node token` (the installed binary) prints the agent's
	// settings; the operator on the server's host trusts the certificate
	// file itself as the CA.
	tokenOut := runEnv(t, []string{"CAIRN_SERVER=" + serverURL, "CAIRN_API_TOKEN=" + apiToken, "CAIRN_SERVER_CA=" + certFile},
		"/usr/bin/cairn", "node", "token", cluster, "web-1")
	require.Contains(t, tokenOut, "CAIRN_SERVER_FINGERPRINT="+fingerprint+"\n", "the token's answer does not carry the pinned fingerprint")
	token := envValue(t, tokenOut, "CAIRN_NODE_TOKEN")
	nodeRoot := t.TempDir()
	writeFile(t, "/etc/cairn/agent.env", tokenOut+fmt.Sprintf("CAIRN_TEMPORAL_ADDRESS=%s\nCAIRN_NODE_ROOT=%s\nCAIRN_LOG_FORMAT=text\n", dev.HostPort, nodeRoot), 0o600)
	agent := startUnit(t, "/usr/lib/systemd/system/cairn-agent.service")
	agent.waitFor(t, "polling task queue", 2*time.Minute)

	t.Run("facts reported", func(t *testing.T) {
		cl, err := api.GetCluster(ctx, cluster)
		require.NoError(t, err)
		f := cl.Nodes[0].Facts
		require.NotNil(t, f, "the agent reported no facts")
		host, _ := os.Hostname()
		assert.Equal(t, host, f.Hostname)
		assert.Positive(t, f.CPUs)
		assert.Positive(t, f.MemoryBytes)
		assert.NotEmpty(t, f.OS.ID)
		assert.Equal(t, map[string]any{"facts": map[string]any{"cpus": float64(999)}}, cl.Nodes[0].Attributes, "the report changed the operator's attributes")
		nodes := runEnv(t, []string{"CAIRN_SERVER=" + serverURL, "CAIRN_API_TOKEN=" + apiToken, "CAIRN_SERVER_FINGERPRINT=" + fingerprint},
			"/usr/bin/cairn", "cluster", "nodes", cluster)
		assert.Contains(t, nodes, "web-1")
		assert.Contains(t, nodes, host)
	})

	t.Run("graph step on the agent", func(t *testing.T) {
		ex, err := api.ExecuteGraph(ctx, cluster, contract.GraphRequest{})
		require.NoError(t, err)
		deadline := time.Now().Add(3 * time.Minute)
		for ex.Status == model.ExecRunning || ex.Status == model.ExecWaiting || ex.Status == "" {
			require.True(t, time.Now().Before(deadline), "execution %s still %s", ex.ID, ex.Status)
			time.Sleep(300 * time.Millisecond)
			ex, err = api.GetExecution(ctx, ex.ID)
			require.NoError(t, err)
		}
		require.Equal(t, model.ExecCompleted, ex.Status, "execution %s: %+v", ex.ID, ex)
		host, _ := os.Hostname()
		data, err := os.ReadFile(filepath.Join(nodeRoot, "whoami.txt"))
		require.NoError(t, err, "the step did not run on the agent")
		// The operator's attribute facts.cpus wins over the report.
		assert.Equal(t, host+" 999\n", string(data))
	})

	t.Run("a revoked token is refused at once", func(t *testing.T) {
		agentReq := func() int {
			req, err := http.NewRequest(http.MethodGet, serverURL+"/v1/agent/node", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := pinnedClient(t, fingerprint).Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusOK, agentReq())
		runEnv(t, []string{"CAIRN_SERVER=" + serverURL, "CAIRN_API_TOKEN=" + apiToken, "CAIRN_SERVER_FINGERPRINT=" + fingerprint},
			"/usr/bin/cairn", "node", "token", cluster, "web-1", "--revoke")
		require.Equal(t, http.StatusUnauthorized, agentReq())
	})

	agent.stop(t)
	server.stop(t)
}

// unitProcess is a process started as a unit's ExecStart would be.
type unitProcess struct {
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{}
}

// startUnit starts what an installed unit's [Service] says, as systemd
// would without its sandbox: ExecStart's command line, the variables of
// EnvironmentFile (and no others but systemd's PATH, HOME, USER,
// LOGNAME), User and Group, WorkingDirectory.
func startUnit(t *testing.T, path string) *unitProcess {
	t.Helper()
	u := readUnit(t, path)
	argv := strings.Fields(strings.TrimLeft(u.one(t, "ExecStart"), "-@+!:"))
	require.NotEmpty(t, argv, "%s: no ExecStart", path)
	envFile := strings.TrimPrefix(u.one(t, "EnvironmentFile"), "-")
	acct, err := user.Lookup(u.one(t, "User"))
	require.NoError(t, err, "%s: User", path)
	env := []string{"PATH=" + systemdPath, "HOME=" + acct.HomeDir, "USER=" + acct.Username, "LOGNAME=" + acct.Username}
	env = append(env, readEnvFile(t, envFile)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = u.one(t, "WorkingDirectory")
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	uid, _ := strconv.Atoi(acct.Uid)
	gid, _ := strconv.Atoi(acct.Gid)
	if g := u.one(t, "Group"); g != "" {
		grp, err := user.LookupGroup(g)
		require.NoError(t, err, "%s: Group", path)
		gid, _ = strconv.Atoi(grp.Gid)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
	p := &unitProcess{cmd: cmd, out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	require.NoError(t, cmd.Start(), "%s: start %v", path, argv)
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(path), p.out.String())
		}
	})
	return p
}

// waitFor waits until the process printed want.
func (p *unitProcess) waitFor(t *testing.T, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.out.String(), want) {
		select {
		case <-p.done:
			t.Fatalf("%s exited before printing %q:\n%s", p.cmd.Path, want, p.out.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "%q not printed within %s:\n%s", want, within, p.out.String())
		time.Sleep(100 * time.Millisecond)
	}
}

// stop sends SIGTERM, as KillMode=mixed does, and waits for the exit.
func (p *unitProcess) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
		assert.True(t, p.cmd.ProcessState.Success(), "%s exited with %v:\n%s", p.cmd.Path, p.cmd.ProcessState, p.out.String())
	case <-time.After(time.Minute):
		t.Errorf("%s did not stop within a minute of SIGTERM", p.cmd.Path)
	}
}

func (p *unitProcess) kill() {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// waitForAPI waits until the server answers /readyz over TLS, trusting
// its certificate file as its CA, and returns a client of it.
func waitForAPI(t *testing.T, server *unitProcess, url, certFile, token string) *client.Client {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var hc *http.Client
	for {
		select {
		case <-server.done:
			t.Fatalf("the server exited:\n%s", server.out.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "the server is not ready:\n%s", server.out.String())
		if hc == nil {
			if data, err := os.ReadFile(certFile); err == nil {
				pool := x509.NewCertPool()
				require.True(t, pool.AppendCertsFromPEM(data))
				hc = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			}
		}
		if hc != nil {
			if resp, err := hc.Get(url + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	c, err := client.New(url, token, client.WithHTTPClient(hc))
	require.NoError(t, err)
	return c
}

// pinnedClient trusts exactly the certificate of that fingerprint.
func pinnedClient(t *testing.T, fingerprint string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // pinned below
		VerifyConnection: func(cs tls.ConnectionState) error {
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if "sha256:"+hex.EncodeToString(sum[:]) != fingerprint {
				return fmt.Errorf("not the pinned certificate")
			}
			return nil
		},
	}}}
}

// certFingerprint is the SHA-256 of a PEM certificate's DER bytes, as
// openssl x509 -fingerprint -sha256 computes it.
func certFingerprint(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block, "%s holds no PEM", path)
	sum := sha256.Sum256(block.Bytes)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func readEnvFile(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var env []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q", path, line)
		env = append(env, strings.TrimSpace(k)+"="+strings.Trim(strings.TrimSpace(v), `"'`))
	}
	return env
}

func envValue(t *testing.T, out, key string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	t.Fatalf("no %s in:\n%s", key, out)
	return ""
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	return runEnv(t, nil, name, args...)
}

// runEnv runs a command with env added to a clean environment (PATH only).
func runEnv(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append([]string{"PATH=" + systemdPath}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %v:\n%s%s", name, args, stdout.String(), stderr.String())
	return stdout.String()
}

func glob1(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.Len(t, m, 1, "want one file matching %s", pattern)
	return m[0]
}

func checkOwner(t *testing.T, path, owner, group string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	u, err := user.LookupId(strconv.Itoa(int(st.Uid)))
	require.NoError(t, err)
	g, err := user.LookupGroupId(strconv.Itoa(int(st.Gid)))
	require.NoError(t, err)
	assert.Equal(t, owner, u.Username, "%s owner", path)
	assert.Equal(t, group, g.Name, "%s group", path)
	assert.Equal(t, mode, fi.Mode().Perm(), "%s mode", path)
}

// writeFile replaces a file's content and keeps its owner (the package's
// postinstall set it).
func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, mode)
	require.NoError(t, err)
	_, err = f.WriteString(content)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
