package activities

import (
	"sync"
	"time"
)

// sentMemoryFor is how long what a watcher told its pools outlives the
// watcher on this worker. A watcher started within it (the cluster
// continued as new, or the attempt was retried here) goes on from what was
// sent and signals only what changed; one started later, or on another
// worker, re-sends full state. At 10,000 pools each restart re-sent 10,000
// signals, one workflow task each. Short, because a watcher elsewhere may
// have told the pools something newer meanwhile; a pool's own resync
// bounds what a skipped signal could cost.
const sentMemoryFor = time.Minute

// sentFingerprints is what this worker's watchers last told each pool,
// per cluster, kept beside the watchers rather than in one.
type sentFingerprints struct {
	mu        sync.Mutex
	byCluster map[string]*clusterSent
}

// clusterSent is one cluster's: each pool's last fingerprint sent.
type clusterSent struct {
	mu      sync.Mutex
	fp      map[string]string
	touched time.Time
}

// of is the cluster's memory, emptied first if no watcher used it within
// sentMemoryFor.
func (s *sentFingerprints) of(cluster string, now time.Time) *clusterSent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byCluster == nil {
		s.byCluster = map[string]*clusterSent{}
	}
	c := s.byCluster[cluster]
	if c == nil {
		c = &clusterSent{fp: map[string]string{}}
		s.byCluster[cluster] = c
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.touched) > sentMemoryFor {
		c.fp = map[string]string{}
	}
	c.touched = now
	return c
}

// touch marks the memory in use (each sample), so a watcher restarted
// right after this one stopped finds it.
func (c *clusterSent) touch(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touched = now
}

func (c *clusterSent) get(pool string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fp, ok := c.fp[pool]
	return fp, ok
}

func (c *clusterSent) set(pool, fp string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fp[pool] = fp
}

func (c *clusterSent) forget(pool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.fp, pool)
}
