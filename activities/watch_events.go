package activities

import (
	"sort"
	"sync"
	"time"
)

// coalescer gathers watch events by pool and lets each pool be sampled at
// most once per interval: the first event of a burst at once, the rest
// together when the interval is over.
type coalescer struct {
	every time.Duration
	// kick wakes the watcher after an event; one waiting wake-up is enough.
	kick chan struct{}

	mu    sync.Mutex
	dirty map[string]bool
	last  map[string]time.Time
}

func newCoalescer(every time.Duration) *coalescer {
	return &coalescer{every: every, kick: make(chan struct{}, 1), dirty: map[string]bool{}, last: map[string]time.Time{}}
}

// note records an event for a pool; it never blocks (informer handlers
// call it).
func (c *coalescer) note(poolID string) {
	c.mu.Lock()
	c.dirty[poolID] = true
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// due takes the pools with events whose last event-driven sample is at
// least the interval ago, sorted, and says when the next of the others
// will be (zero: none waits).
func (c *coalescer) due(now time.Time) (ids []string, next time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.dirty {
		at := c.last[id].Add(c.every)
		if !now.Before(at) {
			ids = append(ids, id)
			delete(c.dirty, id)
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	sort.Strings(ids)
	return ids, next
}

// sent records that the pools were sampled for their events.
func (c *coalescer) sent(ids []string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.last[id] = at
	}
	// Forget pools quiet for long so the map stays the size of the churn.
	if len(c.last) > 4096 {
		for id, t := range c.last {
			if at.Sub(t) > c.every {
				delete(c.last, id)
			}
		}
	}
}
