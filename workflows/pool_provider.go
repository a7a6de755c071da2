package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// The provider is the truth for capacity and the cluster for nodes: the
// pool's target and its booting machines come from the provider's node
// groups, read before acting, never from the pool's own tally.

// minNoHelpGrace is the least time a bought node is Ready before the pod
// it was bought for is judged not helped.
const minNoHelpGrace = 30 * time.Second

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

// machines joins the provider's machines with their nodes' state.
func (s *PoolState) machines() []law.Machine {
	if s.Provider == nil {
		return nil
	}
	nodes := map[string]types.NodeObservation{}
	if s.Observation != nil {
		for _, n := range s.Observation.Nodes {
			nodes[n.Name] = n
		}
	}
	var out []law.Machine
	for _, g := range s.Provider.Groups {
		for _, inst := range g.Instances {
			m := law.Machine{ID: inst.ID, Name: inst.Name, Size: g.Size, GroupID: g.ID, CreatedAt: inst.CreatedAt}
			if m.Name == "" {
				m.Name = inst.ID // not named yet: known by its ID until it registers
			}
			if n, ok := nodes[inst.Name]; ok {
				m.Node = n.State
				if m.CreatedAt.IsZero() {
					m.CreatedAt = n.CreatedAt
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// daemonOverhead is the most the pool's nodes' own pods (DaemonSets)
// were seen to take on one node: what a new node gives them first.
func (s *PoolState) daemonOverhead() types.Resources {
	var most types.Resources
	if s.Observation == nil {
		return most
	}
	for _, n := range s.Observation.Nodes {
		r := n.Reserved
		most = types.Resources{MilliCPU: max(most.MilliCPU, r.MilliCPU), Memory: max(most.Memory, r.Memory),
			GPUs: max(most.GPUs, r.GPUs), Pods: max(most.Pods, r.Pods)}
	}
	return most
}

// leaked are the provider's machines outside every group of the pool.
func (s *PoolState) leaked() []law.Machine {
	if s.Provider == nil {
		return nil
	}
	out := make([]law.Machine, 0, len(s.Provider.Leaked))
	for _, m := range s.Provider.Leaked {
		out = append(out, law.Machine{ID: m.ID, Name: m.Name, CreatedAt: m.CreatedAt})
	}
	return out
}

// bootingNodes is the room the planner may count on besides new nodes:
// machines asked for that are not Ready nodes yet and still within their
// provision timeout, registered or not, and group targets the provider has
// not launched machines for yet. Unregistered ones carry only a name and a
// size; the plan activity gives them their size's room.
func (p *pool) bootingNodes(now time.Time) []types.NodeObservation {
	s := p.state
	if s.Provider == nil {
		return p.legacyBootingNodes()
	}
	observed := map[string]types.NodeObservation{}
	if s.Observation != nil {
		for _, n := range s.Observation.Nodes {
			observed[n.Name] = n
		}
	}
	timeout := s.Policy.EffectiveProvisionTimeout()
	var out []types.NodeObservation
	for _, g := range s.Provider.Groups {
		for _, inst := range g.Instances {
			if !inst.CreatedAt.IsZero() && !now.Before(inst.CreatedAt.Add(timeout)) {
				continue // expired: it is being repaired, not waited for
			}
			n, registered := observed[inst.Name]
			switch {
			case !registered:
				out = append(out, types.NodeObservation{Name: inst.Name, Size: g.Size, State: types.NodeProvisioning, CreatedAt: inst.CreatedAt, Allocatable: s.SizeRoom[g.Size]})
			case (n.State == types.NodeProvisioning || n.State == types.NodeNotReady) && s.SeenReady[n.Name].IsZero():
				// Registered, not Ready yet: sizing counts booting room on
				// provisioning nodes only.
				n.State = types.NodeProvisioning
				out = append(out, n)
			}
		}
		for i := len(g.Instances); i < g.Target; i++ {
			out = append(out, types.NodeObservation{Name: fmt.Sprintf("%s-launching-%d", g.ID, i), Size: g.Size, State: types.NodeProvisioning, Allocatable: s.SizeRoom[g.Size]})
		}
	}
	return out
}

// planRoom is the room a scale-up plans onto besides new nodes: the
// booting machines, and the nodes Ready for less than noHelpGrace.
// kube-scheduler retries an unschedulable pod against a new node only
// after its backoff (up to 10 s), and the binding shows an observation
// later, so a pod still pending beside such a node may yet land there:
// buying for it would buy the node twice (the real scheduler's suite
// caught a 2c4g bought for a pod the just-Ready 4c8g then took). Past the
// grace, a pod that node has room for and still refuses is the no-help
// guard's to judge (trackPurchases), and it is bought for again.
func (p *pool) planRoom(now time.Time) []types.NodeObservation {
	out := p.bootingNodes(now)
	s := p.state
	if s.Observation == nil {
		return out
	}
	grace, timeout := s.noHelpGrace(), s.Policy.EffectiveProvisionTimeout()
	var untried time.Time // the oldest try among pending pods, if the rule reads tries
	if p.rules.TriedSinceReady {
		untried = oldestTry(s.Observation.PendingEntries())
	}
	backlog := p.rules.TriedSinceReady && s.Observation.Queued > 0
	for _, n := range s.Observation.Nodes {
		if backlog && n.State == types.NodeReady {
			// Pods the scheduler has not tried yet: every Ready node's
			// free room is offered to them before a new node is.
			out = append(out, n)
			continue
		}
		// Seen Ready lately and registered lately: a node that was Ready
		// long before the pool first looked is no new node. Past the
		// grace, it is still room while some pending pod was last tried
		// before it became Ready: the scheduler has not offered it the
		// node yet.
		ready, seen := s.SeenReady[n.Name]
		lately := now.Before(ready.Add(grace)) || (!untried.IsZero() && untried.Before(ready))
		if n.State == types.NodeReady && seen && lately && now.Before(n.CreatedAt.Add(timeout)) {
			out = append(out, n)
		}
	}
	return out
}

// oldestTry is the earliest TriedAt among pending entries that report one.
func oldestTry(pods []types.PendingPod) time.Time {
	var at time.Time
	for _, pod := range pods {
		if !pod.TriedAt.IsZero() && (at.IsZero() || pod.TriedAt.Before(at)) {
			at = pod.TriedAt
		}
	}
	return at
}

// noHelpGrace is how long a new node is Ready before a pod still pending
// beside it, with room there, is judged refused by the scheduler: long
// enough for the scheduler to retry the pod and an observation to show it.
func (s *PoolState) noHelpGrace() time.Duration {
	return max(s.Policy.PendingThreshold.D(), 3*s.Policy.SampleInterval.D(), minNoHelpGrace)
}

// legacyBootingNodes is what runs recorded before provider truth passed.
func (p *pool) legacyBootingNodes() []types.NodeObservation {
	if p.state.Observation == nil {
		return nil
	}
	var out []types.NodeObservation
	for _, n := range p.state.Observation.Nodes {
		if n.State == types.NodeProvisioning || n.State == types.NodeNotReady {
			out = append(out, n)
		}
	}
	return out
}

// awaiting are the pods whose purchase is not judged yet.
func (s *PoolState) awaiting() map[string]bool {
	out := make(map[string]bool, len(s.BoughtFor))
	for key := range s.BoughtFor {
		out[key] = true
	}
	return out
}

// awaitingPods are the listed pending pods nodes were bought for: the plan
// keeps the room of those nodes for them.
func (s *PoolState) awaitingPods() []types.PendingPod {
	if s.Observation == nil || len(s.BoughtFor) == 0 {
		return nil
	}
	var out []types.PendingPod
	for _, pod := range s.Observation.PendingPods {
		if _, bought := s.BoughtFor[pod.Key()]; bought {
			out = append(out, pod)
		}
	}
	return out
}

// forgetPurchasesOf releases the pods a size's machines were bought for:
// those machines are gone, so the pods may buy again (another size).
func (s *PoolState) forgetPurchasesOf(size string) {
	for key, buy := range s.BoughtFor {
		if buy.Size == size {
			delete(s.BoughtFor, key)
		}
	}
}

// addedWithoutProgress sums the nodes added within the progress window
// since the last pod bought for got scheduled.
func (s *PoolState) addedWithoutProgress(now time.Time) int {
	window := s.Policy.EffectiveRunawayGuardWindow()
	n := 0
	for _, add := range s.Additions {
		if now.Sub(add.At) < window && add.At.After(s.LastProgress) {
			n += add.Nodes
		}
	}
	return n
}

// machinesBySize counts the pool's machines per size, as the provider's
// group targets say, for pricing the pool's spend.
func (s *PoolState) machinesBySize() map[string]int {
	if s.Provider == nil {
		return nil
	}
	out := map[string]int{}
	for _, g := range s.Provider.Groups {
		out[g.Size] += g.Target
	}
	return out
}

// headroomNodes are the nodes headroom may sit on: Ready ones as observed,
// and machines still booting with their size's room.
func (p *pool) headroomNodes(now time.Time) []types.NodeObservation {
	s := p.state
	var out []types.NodeObservation
	if s.Observation != nil {
		for _, n := range s.Observation.Nodes {
			if n.State == types.NodeReady {
				out = append(out, n)
			}
		}
	}
	for _, n := range p.bootingNodes(now) {
		if n.Allocatable != (types.Resources{}) {
			out = append(out, n)
		}
	}
	return out
}

// hourlyCost is what the pool's machines cost per hour, by the provider's
// group targets and the prices of the last plan (0 before any plan).
func (s *PoolState) hourlyCost() float64 {
	total := 0.0
	for key, n := range s.offeringMachines() {
		total += float64(n) * s.SizePrice[key]
	}
	return total
}
