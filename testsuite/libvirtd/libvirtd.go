// Package libvirtd runs Debian's real libvirtd for a test, on a private
// unix socket in a temporary directory: no system service, no TCP. It is
// started with an empty driver-module directory (LIBVIRT_DRIVER_DIR), so
// only the drivers built into the daemon load: the remote protocol and
// libvirt's own test driver (test:///default), which is the point. The
// QEMU, LXC and network modules would need /dev/kvm, the libvirt-qemu
// user and D-Bus, which a CI container lacks.
//
// Found on libvirt 9.0.0: the daemon serves test:///default to
// go-libvirt's RPC client, and its state (domains, volumes) is one shared
// instance while any connection holds it open, so a second connection sees
// the first one's domains; when the last connection closes, the daemon
// drops it and the next connection starts again from the driver's
// built-in default. Tests keep a connection open (Keep) for as long as
// they need the hypervisor's state to last, as a real host's would.
package libvirtd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
)

// TestURI is libvirt's own test driver with its built-in default state.
const TestURI = "test:///default"

// Binary is where Debian's libvirt-daemon installs the daemon.
const Binary = "/usr/sbin/libvirtd"

// Start runs libvirtd until the test ends and returns its read-write
// socket. Without the binary the test is skipped, except under CI=true,
// where it fails: CI installs libvirt-daemon.
func Start(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing; CI installs Debian's libvirt-daemon: %v", Binary, err)
		}
		t.Skipf("%s is not installed (Debian's libvirt-daemon); skipping", Binary)
	}
	// A short path: a unix socket's path is limited to 108 bytes.
	dir, err := os.MkdirTemp("", "lvd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sockDir, drivers := filepath.Join(dir, "s"), filepath.Join(dir, "drivers")
	for _, d := range []string{sockDir, drivers} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "libvirtd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`listen_tls = 0
listen_tcp = 0
unix_sock_dir = %q
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "2:file:%s"
`, sockDir, filepath.Join(dir, "libvirtd.log"))), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary, "--config", conf, "--pid-file", filepath.Join(dir, "libvirtd.pid"))
	cmd.Env = append(os.Environ(), "LIBVIRT_DRIVER_DIR="+drivers)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start libvirtd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	sock := filepath.Join(sockDir, "libvirt-sock")
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "libvirtd.log"))
			t.Fatalf("libvirtd exited: %v\n%s", err, log)
		default:
		}
		if l := dial(sock); l.ConnectToURI(TestURI) == nil {
			_ = l.Disconnect()
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatalf("libvirtd did not answer on %s", sock)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func dial(sock string) *libvirt.Libvirt {
	return libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(sock), dialers.WithLocalTimeout(5*time.Second)))
}

// Keep opens a connection to uri on sock and holds it until the test ends,
// so the test driver's state outlives every other connection.
func Keep(t testing.TB, sock, uri string) *libvirt.Libvirt {
	t.Helper()
	l := dial(sock)
	if err := l.ConnectToURI(libvirt.ConnectURI(uri)); err != nil {
		t.Fatalf("connect to %s on %s: %v", uri, sock, err)
	}
	t.Cleanup(func() { _ = l.Disconnect() })
	return l
}
