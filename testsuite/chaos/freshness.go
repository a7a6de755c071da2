package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// freshnessLimit is the longest a pool may go without applying an
// observation while a worker is up: the watcher samples every 5 s and the
// chaos pools resync every 35 s, so only a pool that stopped taking
// observations in (a loop sitting in a provider call a lost worker cut)
// goes past it.
const freshnessLimit = 45 * time.Second

// freshnessEvery is how often the sampler reads every pool's status.
const freshnessEvery = 5 * time.Second

// freshnessSample is one status read of one pool while visor dev was up:
// the time of the observation the pool had applied, and since when the
// worker reading it had been up.
type freshnessSample struct {
	Pool       string
	At, UpAt   time.Time
	ObservedAt time.Time
	// NextWake is when the pool's loop meant to evaluate next: set once
	// it decides again.
	NextWake time.Time
}

// age is how long the pool had gone without an applied observation while
// a worker was up: the clock starts no earlier than the worker did.
func (s freshnessSample) age() time.Duration {
	from := s.ObservedAt
	if from.Before(s.UpAt) {
		from = s.UpAt
	}
	return s.At.Sub(from)
}

// freshness collects samples across every start of visor dev.
type freshness struct {
	mu       sync.Mutex
	samples  []freshnessSample
	failures int // status reads that failed (a worker still replaying, the kill)
}

// watch samples the pools every freshnessEvery until stop is called:
// from when visor dev said it was up until just before the harness kills
// it, so every sample is one a worker was up for.
func (f *freshness) watch(ctx context.Context, dev devCommand, pools []types.PoolKey, upAt time.Time) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := dialDev(ctx, dev.dataDir, dev.grpcPort)
		if err != nil {
			f.mu.Lock()
			f.failures++
			f.mu.Unlock()
			return
		}
		defer c.Close()
		t := time.NewTicker(freshnessEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, k := range pools {
				qctx, qcancel := context.WithTimeout(ctx, freshnessEvery)
				st, err := starter.PoolStatus(qctx, c, k)
				qcancel()
				if ctx.Err() != nil {
					return // stopped mid-read: the worker may be gone, no sample
				}
				f.mu.Lock()
				if err != nil {
					f.failures++
				} else {
					f.samples = append(f.samples, freshnessSample{Pool: k.WorkflowID(), At: time.Now(), UpAt: upAt, ObservedAt: st.LastObservationAt, NextWake: st.NextWake})
				}
				f.mu.Unlock()
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (f *freshness) taken() (samples []freshnessSample, failures int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]freshnessSample(nil), f.samples...), f.failures
}

// checkObservationFreshness: no pool goes without an applied observation
// for more than freshnessLimit while a worker is up. One violation per
// pool, with its worst spell.
func checkObservationFreshness(t truth) result {
	r := result{Name: fmt.Sprintf("no pool without an applied observation for more than %s while a worker is up", freshnessLimit)}
	worst := map[string]freshnessSample{}
	over := map[string]int{}
	for _, s := range t.Freshness {
		r.Checked++
		if s.age() <= freshnessLimit {
			continue
		}
		over[s.Pool]++
		if w, seen := worst[s.Pool]; !seen || s.age() > w.age() {
			worst[s.Pool] = s
		}
	}
	for _, p := range t.Spec.Pools {
		id := p.Key.WorkflowID()
		if w, bad := worst[id]; bad {
			r.fail("%s: %d samples over the limit; worst %s at %s (worker up since %s, observation of %s)", id, over[id],
				w.age().Round(time.Second), w.At.UTC().Format(time.TimeOnly), w.UpAt.UTC().Format(time.TimeOnly), w.ObservedAt.UTC().Format(time.TimeOnly))
		}
	}
	if r.Checked == 0 {
		r.fail("no status was read while a worker was up (%d reads failed)", t.FreshnessFailures)
	}
	return r
}
