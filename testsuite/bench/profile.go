package bench

import (
	"fmt"
	"os"
	"runtime/pprof"
	"testing"
	"time"
)

// profileCPU writes a CPU profile of the process (server, worker and
// client together) to path until the returned stop is called; with no
// path it does nothing. go test's own -cpuprofile would cover the idle
// window and the settle too, and hide the phase being looked at.
func profileCPU(b *testing.B, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// loadAverage is /proc/loadavg's three figures: beside a CPU time, how
// busy the shared machine was.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	var one, five, fifteen float64
	if _, err := fmt.Sscan(string(raw), &one, &five, &fifteen); err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f %.1f %.1f", one, five, fifteen)
}

// applyProgress logs every thousandth pool applied with the time since
// began: whether the apply rate holds or falls as pools accumulate.
func applyProgress(b *testing.B, began time.Time) func(done, total int) {
	return func(done, total int) {
		if done%1000 == 0 || done == total {
			b.Logf("apply: %d of %d after %s [load %s]", done, total, time.Since(began).Round(100*time.Millisecond), loadAverage())
		}
	}
}
