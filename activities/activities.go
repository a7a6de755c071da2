// Package activities holds every side effect of the pool and cluster
// workflows: observe, size, provision, drain, delete, meter and watch. They
// are methods on one struct holding the clients, as Temporal's samples do.
package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/types"
)

// ClusterSource resolves a cluster ID to the connectors that reach it. The
// worker builds it from configuration; credentials are resolved inside it,
// on the worker, never passed through workflow history.
type ClusterSource interface {
	Cluster(ctx context.Context, id string) (connectors.Cluster, error)
}

// Activities is registered with the worker.
type Activities struct {
	Clusters ClusterSource
	// Temporal lets the watcher signal pools.
	Temporal client.Client
	// Meter receives node-hour events.
	Meter metering.Sink
	// SystemKey, when set, signs the watcher's observe and watcher-report
	// signals so workflows can tell them from forged ones.
	SystemKey *auth.SigningKey
	// TrustKeys are the public keys workflows verify with (the Trust
	// activity hands them over).
	TrustKeys *auth.Trust
	// OrgLimits are the platform's limits per org (the worker's clusters
	// file): PlatformOrgLimits hands the pool's org's to the pool, which
	// obeys the stricter of them and its own policy's.
	OrgLimits map[string]types.OrgPolicy
	// Payloads decodes what the workflows wrote for others to read (their
	// memos: ReadOrgUsage's hourly costs) the way the client encoded it,
	// encrypted by the codec; nil reads plain JSON.
	Payloads converter.DataConverter

	cacheMu sync.Mutex
	cache   map[string]cachedObservation
	// sentTo is what this worker's watchers told each pool (watch_sent.go).
	sentTo sentFingerprints
}

type cachedObservation struct {
	at  time.Time
	obs connectors.ClusterObservation
}

// observationCacheTTL lets many pools of one cluster resync together
// without listing the cluster once each.
const observationCacheTTL = 2 * time.Second

func (a *Activities) cluster(ctx context.Context, id string) (connectors.Cluster, error) {
	if a.Clusters == nil {
		return connectors.Cluster{}, asTemporalError(errclass.New(errclass.Permanent, "worker", "resolve cluster", errors.New("this worker has no clusters configured")))
	}
	c, err := a.Clusters.Cluster(ctx, id)
	if err != nil {
		return connectors.Cluster{}, asTemporalError(err)
	}
	return c, nil
}

func (a *Activities) observeCluster(ctx context.Context, c connectors.Cluster) (connectors.ClusterObservation, error) {
	a.cacheMu.Lock()
	if hit, ok := a.cache[c.ID]; ok && time.Since(hit.at) < observationCacheTTL {
		a.cacheMu.Unlock()
		return hit.obs, nil
	}
	a.cacheMu.Unlock()
	if c.Observer == nil {
		return connectors.ClusterObservation{}, errclass.New(errclass.Permanent, "worker", "observe", fmt.Errorf("cluster %s has no observer", c.ID))
	}
	obs, err := c.Observer.ObserveCluster(ctx)
	if err != nil {
		return obs, err
	}
	a.cacheMu.Lock()
	if a.cache == nil {
		a.cache = map[string]cachedObservation{}
	}
	a.cache[c.ID] = cachedObservation{at: time.Now(), obs: obs}
	a.cacheMu.Unlock()
	return obs, nil
}

// forgetObservation drops the cached sample of a cluster: the next one is
// taken fresh.
func (a *Activities) forgetObservation(cluster string) {
	a.cacheMu.Lock()
	delete(a.cache, cluster)
	a.cacheMu.Unlock()
}

// asTemporalError turns a connector error into an application error whose
// type is the error class, so workflow retry policies can name the classes
// that must not be retried, and a provider's retry-after is honoured.
func asTemporalError(err error) error {
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	class := errclass.Of(err)
	opts := temporal.ApplicationErrorOptions{
		NonRetryable: class == errclass.Permanent || class == errclass.NotFound || class == errclass.InsufficientCapacity,
		Cause:        err,
	}
	if ra := errclass.RetryAfterOf(err); ra > 0 {
		opts.NextRetryDelay = ra
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), string(class), opts)
}
