package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one child process the deployment started and must end: its
// command line is kept so a killed process restarts the same way.
type proc struct {
	name    string
	path    string
	args    []string
	env     []string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	starts  int
	// cpuBefore is what earlier incarnations of this process used.
	cpuBefore time.Duration
}

// start launches the process, its output appended to logPath. It dies
// with the test process (Pdeathsig), so nothing outlives a killed test.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "--- start %d at %s\n", p.starts+1, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.exited, p.starts = cmd, make(chan struct{}), p.starts+1
	exited := p.exited
	go func() {
		err := cmd.Wait()
		log.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// kill ends the process with SIGKILL, as a lost machine would, and reaps it.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	p.cpuBefore += p.cpu()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	p.mu.Lock()
	p.cmd = nil
	p.mu.Unlock()
}

// stop asks for a clean exit (SIGTERM), then kills after timeout.
func (p *proc) stop(timeout time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(timeout):
		p.kill()
	}
}

// alive says whether the process runs; when not, why it ended.
func (p *proc) alive() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false, "not started"
	}
	select {
	case <-p.exited:
		return false, fmt.Sprintf("exited: %v (log %s)", p.waitErr, p.logPath)
	default:
		return true, ""
	}
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// cpu is the running incarnation's user+system CPU, from /proc.
func (p *proc) cpu() time.Duration {
	pid := p.pid()
	if pid == 0 {
		return 0
	}
	d, _ := processCPU(pid, false)
	return d
}

// logTail is the end of the process's log, for failure messages.
func (p *proc) logTail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// processCPU reads utime+stime of pid (and with children, what its
// reaped children used: PostgreSQL's postmaster reaps its backends).
func processCPU(pid int, children bool) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces) in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is state (field 3); utime is field 14, stime 15, cutime 16, cstime 17.
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	fields := []int{11, 12}
	if children {
		fields = append(fields, 13, 14)
	}
	var ticks int64
	for _, k := range fields {
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat field %d: %w", pid, k+3, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// treeCPU is the CPU of pid, its reaped children and its live children:
// a PostgreSQL cluster's whole use, its postmaster's pid given.
func treeCPU(pid int) (time.Duration, error) {
	total, err := processCPU(pid, true)
	if err != nil {
		return 0, err
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if d, err := processCPU(child, false); err == nil {
				total += d
			}
		}
	}
	return total, nil
}

// residentBytes is pid's VmRSS, 0 when it cannot be read (the process is
// down between a kill and its restart).
func residentBytes(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
