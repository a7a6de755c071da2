package activities

import (
	"context"
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// EventsInput is what a pool tells its cluster's objects.
type EventsInput struct {
	Key    types.PoolKey             `json:"key"`
	Events []connectors.ClusterEvent `json:"events"`
}

// RecordEvents records Kubernetes Events on the pool's pods and nodes (the
// pool names them from its own observation). A cluster without an event
// recorder records nothing.
func (a *Activities) RecordEvents(ctx context.Context, in EventsInput) error {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return err
	}
	if c.Events == nil || len(in.Events) == 0 {
		return nil
	}
	for _, e := range in.Events {
		if e.Kind != connectors.EventKindPod && e.Kind != connectors.EventKindNode {
			return asTemporalError(errclass.New(errclass.Permanent, "worker", "record events", fmt.Errorf("event on a %q: only Pod and Node events are recorded", e.Kind)))
		}
	}
	return asTemporalError(c.Events.RecordEvents(ctx, in.Events))
}
