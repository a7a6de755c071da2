package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Ctrl-C stops visor dev cleanly: exit status 0 and not one ERROR or WARN
// line, although activities are in flight when it is stopped.
func TestDevStopsQuietlyOnInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole dev stack")
	}
	port := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	grpcPort := port()
	cmd := exec.Command(os.Args[0], "dev", "--memory", "--grpc-port", grpcPort, "--ui-port", "-1",
		"--sim-tick", "100ms", "--provision-delay", "500ms", "--log-level", "info")
	cmd.Env = append(os.Environ(), runAsCLI+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	up := make(chan string, 1)
	var rest bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "visor dev is up") {
				up <- sc.Text()
			}
			rest.WriteString(sc.Text() + "\n")
		}
		_, _ = io.Copy(&rest, stdout)
	}()
	select {
	case <-up:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("visor dev did not come up; stderr:\n%s", stderr.String())
	}
	// Let the demo pools observe, plan and provision for a while; meanwhile
	// a CLI run elsewhere, with no credential, is told how to get one.
	cli := exec.Command(os.Args[0], "--address", "127.0.0.1:"+grpcPort, "pool", "list")
	cli.Dir = t.TempDir()
	cli.Env = append(withoutEnv(os.Environ(), "VISOR_CREDENTIAL", "VISOR_CODEC_KEYS"), runAsCLI+"=1")
	out, err := cli.CombinedOutput()
	require.Error(t, err, "pool list without a credential: %s", out)
	require.Contains(t, string(out), "Request unauthorized.")
	require.Contains(t, string(out), "export VISOR_CREDENTIAL=file:", "the refusal names the variable and the export line")
	time.Sleep(4 * time.Second)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "exit status; stderr:\n%s", stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("visor dev did not stop on interrupt; stderr:\n%s", stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		require.NotRegexp(t, `level=(ERROR|WARN)`, line, "a clean stop printed:\n%s", stderr.String())
	}
}

// withoutEnv drops the named variables from an environment.
func withoutEnv(env []string, names ...string) []string {
	var kept []string
	for _, kv := range env {
		drop := false
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, kv)
		}
	}
	return kept
}
