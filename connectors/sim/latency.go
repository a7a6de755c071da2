package sim

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// latency draws the added call latency from its own generator, so turning
// latency on does not shift the sequence of the other faults.
type latency struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newLatency(seed int64) *latency {
	return &latency{rng: rand.New(rand.NewPCG(uint64(seed), 0x1a7e))}
}

// half is one leg of a call's added latency: half the base plus half a
// jitter draw.
func (l *latency) half(base, jitter time.Duration) time.Duration {
	d := base / 2
	if jitter > 0 {
		l.mu.Lock()
		d += time.Duration(l.rng.Int64N(int64(jitter))) / 2
		l.mu.Unlock()
	}
	return d
}

// callDelay sleeps one leg of the configured call latency, or until ctx
// ends. Called without f.mu held: a slow call must not stall the others.
func (f *Fleet) callDelay(ctx context.Context) {
	f.mu.Lock()
	base, jitter := f.faults.CallLatency, f.faults.CallLatencyJitter
	f.mu.Unlock()
	d := f.latency.half(base, jitter)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// enter starts a provider call: the latency's first leg, then the lock.
// The func it returns ends the call: unlock, then the second leg, so the
// answer travels while other calls proceed. Use as defer f.enter(ctx)().
func (f *Fleet) enter(ctx context.Context) func() {
	f.callDelay(ctx)
	f.mu.Lock()
	return func() {
		f.mu.Unlock()
		f.callDelay(ctx)
	}
}
