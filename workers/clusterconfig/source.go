package clusterconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// Options tune a Source.
type Options struct {
	// Logger receives simulated clusters' step failures; default slog.Default().
	Logger *slog.Logger
}

// Source is the worker's activities.ClusterSource over a clusters file.
// Each cluster's connectors are built on first use inside an activity and
// kept; a failed build is not kept, so the next activity tries again (a
// credential that appears later is picked up).
type Source struct {
	specs map[string]ClusterSpec
	opts  Options

	mu      sync.Mutex
	entries map[string]*entry
	closed  bool
}

var _ activities.ClusterSource = (*Source)(nil)

// entry is one cluster's connectors once built.
type entry struct {
	// lock is held while building, so concurrent activities build a
	// cluster once; a channel so waiting honours the activity's context.
	lock  chan struct{}
	built *built
}

// NewSource serves the clusters of file, which Load has checked.
func NewSource(file File, opts Options) *Source {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Source{specs: map[string]ClusterSpec{}, opts: opts, entries: map[string]*entry{}}
	for _, c := range file.Clusters {
		s.specs[c.ID] = c
	}
	return s
}

// IDs lists the configured cluster IDs, sorted.
func (s *Source) IDs() []string {
	ids := make([]string, 0, len(s.specs))
	for id := range s.specs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Cluster implements activities.ClusterSource: it returns the cluster's
// connectors, building them on first use.
func (s *Source) Cluster(ctx context.Context, id string) (connectors.Cluster, error) {
	spec, ok := s.specs[id]
	if !ok {
		return connectors.Cluster{}, errclass.New(errclass.Permanent, "worker", "resolve cluster",
			fmt.Errorf("cluster %q is not in this worker's clusters file (it has: %s)", id, strings.Join(s.IDs(), ", ")))
	}
	s.mu.Lock()
	e := s.entries[id]
	if e == nil {
		e = &entry{lock: make(chan struct{}, 1)}
		s.entries[id] = e
	}
	s.mu.Unlock()
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return connectors.Cluster{}, ctx.Err()
	}
	defer func() { <-e.lock }()
	if s.isClosed() {
		// Another worker on the task queue can take the activity.
		return connectors.Cluster{}, errclass.New(errclass.Retryable, "worker", "resolve cluster", errors.New("this worker is shutting down"))
	}
	if e.built != nil {
		return e.built.cluster, nil
	}
	b, err := s.build(ctx, spec)
	if err != nil {
		return connectors.Cluster{}, err
	}
	e.built = &b
	return b.cluster, nil
}

func (s *Source) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops simulated clusters (saving their state) and logs out of
// vCenter sessions. Builds in flight finish first; later calls to Cluster
// fail Retryable.
func (s *Source) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	entries := make(map[string]*entry, len(s.entries))
	for id, e := range s.entries {
		entries[id] = e
	}
	s.mu.Unlock()
	var errs []error
	for id, e := range entries {
		select {
		case e.lock <- struct{}{}:
		case <-ctx.Done():
			return errors.Join(append(errs, ctx.Err())...)
		}
		if e.built != nil && e.built.release != nil {
			if err := e.built.release(ctx); err != nil {
				errs = append(errs, fmt.Errorf("close cluster %s: %w", id, err))
			}
		}
		e.built = nil
		<-e.lock
	}
	return errors.Join(errs...)
}
