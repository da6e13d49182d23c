package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// UserSystemd is a real systemd manager for a test: systemd --user with
// its own runtime directory and home, in a private mount namespace whose
// /run is a fresh tmpfs holding /run/systemd/system (the mark systemd
// wants of a host booted with it), so the host's /run is never touched.
type UserSystemd struct {
	// Address is the D-Bus address of the manager's private socket.
	Address string
	// UnitDir is where the test writes unit files the manager finds.
	UnitDir string
	// Dir is the manager's own temporary directory.
	Dir string
}

// StartUserSystemd starts the manager and stops it when the test ends. It
// needs root (a mount namespace) and /lib/systemd/systemd; without them
// it skips, except where every test must run.
func StartUserSystemd(t testing.TB) UserSystemd {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatalf("a real systemd is required here (CAIRN_REQUIRE_ALL is set): "+format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		unavailable("systemd --user in a mount namespace needs root")
	}
	const manager = "/lib/systemd/systemd"
	if _, err := os.Stat(manager); err != nil {
		unavailable("%s is missing (Debian's systemd package): %v", manager, err)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		unavailable("unshare is missing: %v", err)
	}
	// A short directory: the private socket's path must fit a sockaddr.
	dir, err := os.MkdirTemp("", "cairn-sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	run := filepath.Join(dir, "run")
	home := filepath.Join(dir, "home")
	units := filepath.Join(home, ".config", "systemd", "user")
	for _, d := range []string{run, units} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
		"mount -t tmpfs -o mode=0755 cairn-run /run && mkdir -p /run/systemd/system && exec "+manager+" --user")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "XDG_RUNTIME_DIR=" + run,
		"SYSTEMD_LOG_LEVEL=info", "LANG=C"}
	logFile, err := os.Create(filepath.Join(dir, "systemd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		unavailable("start systemd --user: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // the manager stops its units, then exits
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
	})
	socket := filepath.Join(run, "systemd", "private")
	deadline := time.Now().Add(60 * time.Second)
	for {
		// Listening, not only bound: the socket's file appears before the
		// manager accepts on it (a connect then is refused).
		if c, err := net.Dial("unix", socket); err == nil {
			_ = c.Close()
			break
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "systemd.log"))
			unavailable("systemd --user exited before it listened (%v): %s", err, log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("systemd --user did not listen on %s within 60 s", socket)
		}
	}
	return UserSystemd{Address: "unix:path=" + socket, UnitDir: units, Dir: dir}
}
