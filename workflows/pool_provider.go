package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// The provider is the truth for capacity and the cluster for nodes: the
// pool's target and its booting machines come from the provider's node
// groups, read before acting, never from the pool's own tally.

// readProvider reads the pool's node groups and takes them as the truth.
// A failed read keeps the last view and is recorded; acting on it is still
// safe because every provider call is an absolute, keyed request.
func (p *pool) readProvider(ctx workflow.Context) bool {
	var view activities.ProviderView
	err := workflow.ExecuteActivity(p.activityCtx(ctx, quickActivity, "read node groups"), a.ReadProvider, p.spec.Key).Get(ctx, &view)
	if err != nil {
		p.reject(ctx, "provider read", err)
		return false
	}
	p.apply(ctx, poolcore.ProviderRead{View: view})
	return true
}
