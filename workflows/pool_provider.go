package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
)

// The provider is the truth for capacity and the cluster for nodes: the
// pool's target and its booting machines come from the provider's node
// groups, read before acting, never from the pool's own tally.

// maxRepairsKept bounds the corrections log carried across runs.
const maxRepairsKept = 10

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
	p.takeReading(ctx, view)
	return true
}

// takeReading adopts a fresh read of the provider, noting a target that
// changed behind the pool's back.
func (p *pool) takeReading(ctx workflow.Context, view activities.ProviderView) {
	if s := p.state; s.Provider != nil && s.Provider.Target() != view.Target() {
		p.noteRepair(ctx, fmt.Sprintf("provider target is %d, the pool's last reading was %d: taking the provider's", view.Target(), s.Provider.Target()))
	}
	p.adoptView(ctx, view)
}

// adoptView replaces the pool's idea of its groups with the provider's.
func (p *pool) adoptView(ctx workflow.Context, view activities.ProviderView) {
	s := p.state
	s.Provider = &view
	s.TargetNodes = view.Target()
	p.meterReading(ctx, view) // pool_meter.go
}

// adoptResult takes a provider call's answer: the groups it read after
// the change, or at least the total target, which then stands until the
// next read (the old view would undercount what is booting).
func (p *pool) adoptResult(ctx workflow.Context, view *activities.ProviderView, total int) {
	if view != nil {
		p.adoptView(ctx, *view)
		return
	}
	p.state.Provider = nil
	p.state.TargetNodes = total
}

func (p *pool) noteRepair(ctx workflow.Context, what string) {
	s := p.state
	s.Repairs = append(s.Repairs, workflow.Now(ctx).UTC().Format(time.RFC3339)+" "+what)
	if len(s.Repairs) > maxRepairsKept {
		s.Repairs = s.Repairs[len(s.Repairs)-maxRepairsKept:]
	}
}
