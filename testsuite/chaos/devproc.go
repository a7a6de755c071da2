package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// upLine is what visor dev prints once everything is registered.
var upLine = []byte("visor dev is up")

// devProcess is one `visor dev` the harness started and must end.
type devProcess struct {
	cmd     *exec.Cmd
	log     *os.File
	started time.Time
	up      chan struct{}
	exited  chan struct{}
	waitErr error
}

// devCommand says how to run visor dev: loopback only, the Web UI off
// (nothing to look at, less to compile into each start), a fixed gRPC port
// so every restart serves the same address.
type devCommand struct {
	visor    string
	dataDir  string
	specPath string
	grpcPort int
}

// start launches visor dev with its output in logPath. The child gets its
// own process group (a Ctrl-C at the terminal reaches the harness, which
// ends it) and dies with the harness if the harness is killed.
func (d devCommand) start(logPath string) (*devProcess, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(d.visor, "dev",
		"--data-dir", d.dataDir, "--pools", d.specPath,
		"--ip", "127.0.0.1", "--grpc-port", strconv.Itoa(d.grpcPort), "--ui-port", "-1",
		"--log-level", "warn")
	p := &devProcess{cmd: cmd, log: log, up: make(chan struct{}), exited: make(chan struct{})}
	cmd.Stdout = &upWatcher{w: log, up: p.up}
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s dev: %w", d.visor, err)
	}
	p.started = time.Now()
	go func() {
		p.waitErr = cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	return p, nil
}

// waitUp waits until visor dev says it is up, exits, or the timeout ends.
func (p *devProcess) waitUp(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.up:
		return nil
	case <-p.exited:
		return fmt.Errorf("visor dev exited before it was up: %v (log %s)", p.waitErr, p.log.Name())
	case <-t.C:
		return fmt.Errorf("visor dev was not up after %s (log %s)", timeout, p.log.Name())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isUp says whether visor dev has said it is up.
func (p *devProcess) isUp() bool {
	select {
	case <-p.up:
		return true
	default:
		return false
	}
}

// hasExited says whether the process ended by itself.
func (p *devProcess) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill ends the process with SIGKILL, as a power cut would, and reaps it
// so its data-directory lock is free for the next start.
func (p *devProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop asks visor dev to stop as Ctrl-C does and waits up to timeout for
// it to exit, then kills it. It returns how the process ended.
func (p *devProcess) stop(timeout time.Duration) error {
	if p.hasExited() {
		return fmt.Errorf("visor dev had already exited: %v", p.waitErr)
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.exited:
		return p.waitErr
	case <-t.C:
		p.kill()
		return fmt.Errorf("visor dev did not stop within %s of SIGINT; killed", timeout)
	}
}

// upWatcher passes output on and closes up when the up line goes by. It
// keeps the tail of what it saw, since the line may arrive in pieces.
type upWatcher struct {
	w    *os.File
	up   chan struct{}
	mu   sync.Mutex
	tail []byte
	seen bool
}

func (u *upWatcher) Write(b []byte) (int, error) {
	u.mu.Lock()
	if !u.seen {
		u.tail = append(u.tail, b...)
		if bytes.Contains(u.tail, upLine) {
			u.seen = true
			close(u.up)
		} else if n := len(u.tail); n > len(upLine) {
			u.tail = u.tail[n-len(upLine):]
		}
	}
	u.mu.Unlock()
	n, err := u.w.Write(b)
	if errors.Is(err, os.ErrClosed) {
		return len(b), nil
	}
	return n, err
}
