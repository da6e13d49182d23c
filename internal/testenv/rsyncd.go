package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Rsyncd serves dir as the rsync module "puppet" on a loopback port, as
// Fuel's master serves its puppet modules, until the test ends, and
// returns the port. It needs the rsync program (see Program).
func Rsyncd(t testing.TB, dir string) int {
	t.Helper()
	rsync := Program(t, "rsync")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "rsyncd.conf")
	body := fmt.Sprintf("use chroot = no\nuid = %d\ngid = %d\npid file = %s\n[puppet]\npath = %s\nread only = yes\n",
		os.Getuid(), os.Getgid(), filepath.Join(filepath.Dir(conf), "pid"), dir)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rsync, "--daemon", "--no-detach", "--address=127.0.0.1", fmt.Sprintf("--port=%d", port), "--config="+conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("rsync daemon not listening on %s: %v", addr, err)
		}
	}
}
