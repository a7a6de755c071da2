package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often a provider activity tells the server it is
// alive while a provider call runs. The workflow's heartbeat timeout is a
// few of these, so a worker lost mid-call is noticed in seconds, not after
// the call's whole StartToClose. (The SDK throttles what it sends to the
// server to a fraction of the timeout.)
const heartbeatEvery = 2 * time.Second

// progress is what a provider activity has done so far, kept as its
// heartbeat details: a retry after a lost worker reads it (resumed) and
// skips the steps already done. Each step it skips is keyed at the
// provider too, so the details save calls, never decide correctness.
type progress[T any] struct {
	ctx  context.Context
	mu   sync.Mutex
	done T
	// beating: ctx is an activity's, whose heartbeats the server hears.
	beating bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// beat starts heartbeating for the activity in ctx, from what an earlier
// attempt recorded (the zero T on a first attempt). Call end when the
// activity returns.
func beat[T any](ctx context.Context) *progress[T] {
	p := &progress[T]{ctx: ctx, stop: make(chan struct{})}
	if !activity.IsActivity(ctx) {
		return p // called directly, as a library (tests): nothing to tell
	}
	p.beating = true
	if activity.HasHeartbeatDetails(ctx) {
		// Details that do not decode (an older worker's) are no progress.
		var was T
		if activity.GetHeartbeatDetails(ctx, &was) == nil {
			p.done = was
		}
	}
	activity.RecordHeartbeat(ctx, p.done)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, p.get())
			}
		}
	}()
	return p
}

// get is the progress so far.
func (p *progress[T]) get() T {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// update records a step as done and offers it as the next heartbeat. The
// SDK sends it within its throttle interval (a fraction of the heartbeat
// timeout): a worker lost before that leaves a retry that asks the
// provider again, with the same key.
func (p *progress[T]) update(step func(*T)) {
	p.mu.Lock()
	step(&p.done)
	done := p.done
	p.mu.Unlock()
	if p.beating {
		activity.RecordHeartbeat(p.ctx, done)
	}
}

// end stops the heartbeats.
func (p *progress[T]) end() {
	close(p.stop)
	p.wg.Wait()
}
