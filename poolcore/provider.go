package poolcore

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
)

// minNoHelpGrace is the least time a bought node is Ready before the pod
// it was bought for is judged not helped.
const minNoHelpGrace = 30 * time.Second

// LawMachines joins the provider's machines with their nodes' state.
func (s *State) LawMachines() []law.Machine {
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

// DaemonOverhead is the most the pool's nodes' own pods (DaemonSets)
// were seen to take on one node: what a new node gives them first.
func (s *State) DaemonOverhead() types.Resources {
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

// Leaked are the provider's machines outside every group of the pool.
func (s *State) Leaked() []law.Machine {
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
// Machines asked for that are not Ready nodes yet and still within their
// provision timeout, registered or not, and group targets the provider has
// not launched machines for yet. Unregistered ones carry only a name and a
// size; the plan activity gives them their size's room.
func (s *State) bootingNodes(now time.Time) []types.NodeObservation {
	if s.Provider == nil {
		return s.legacyBootingNodes()
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

// PlanRoom is the room a scale-up plans onto besides new nodes: the
// booting machines, and the nodes Ready for less than noHelpGrace.
// kube-scheduler retries an unschedulable pod against a new node only
// after its backoff (up to 10 s), and the binding shows an observation
// later, so a pod still pending beside such a node may yet land there:
// buying for it would buy the node twice (the real scheduler's suite
// caught a 2c4g bought for a pod the just-Ready 4c8g then took). Past the
// grace, a pod that node has room for and still refuses is the no-help
// guard's to judge (trackPurchases), and it is bought for again.
func (s *State) PlanRoom(now time.Time, rules Rules) []types.NodeObservation {
	out := s.bootingNodes(now)
	if s.Observation == nil {
		return out
	}
	grace, timeout := s.noHelpGrace(), s.Policy.EffectiveProvisionTimeout()
	var untried time.Time // the oldest try among pending pods, if the rule reads tries
	if rules.TriedSinceReady {
		untried = oldestTry(s.Observation.PendingEntries())
	}
	backlog := rules.TriedSinceReady && s.Observation.Queued > 0
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
func (s *State) noHelpGrace() time.Duration {
	return max(s.Policy.PendingThreshold.D(), 3*s.Policy.SampleInterval.D(), minNoHelpGrace)
}

// legacyBootingNodes is the booting room without a provider view: the
// observed nodes not Ready yet.
func (s *State) legacyBootingNodes() []types.NodeObservation {
	if s.Observation == nil {
		return nil
	}
	var out []types.NodeObservation
	for _, n := range s.Observation.Nodes {
		if n.State == types.NodeProvisioning || n.State == types.NodeNotReady {
			out = append(out, n)
		}
	}
	return out
}

// Awaiting are the pods whose purchase is not judged yet.
func (s *State) Awaiting() map[string]bool {
	out := make(map[string]bool, len(s.BoughtFor))
	for key := range s.BoughtFor {
		out[key] = true
	}
	return out
}

// AwaitingPods are the listed pending pods nodes were bought for: the plan
// keeps the room of those nodes for them.
func (s *State) AwaitingPods() []types.PendingPod {
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

// ForgetPurchasesOf releases the pods a size's machines were bought for:
// those machines are gone, so the pods may buy again (another size).
func (s *State) ForgetPurchasesOf(size string) {
	for key, buy := range s.BoughtFor {
		if buy.Size == size {
			delete(s.BoughtFor, key)
		}
	}
}

// AddedWithoutProgress sums the nodes added within the progress window
// since the last pod bought for got scheduled.
func (s *State) AddedWithoutProgress(now time.Time) int {
	window := s.Policy.EffectiveRunawayGuardWindow()
	n := 0
	for _, add := range s.Additions {
		if now.Sub(add.At) < window && add.At.After(s.LastProgress) {
			n += add.Nodes
		}
	}
	return n
}

// MachinesBySize counts the pool's machines per size, as the provider's
// group targets say, for pricing the pool's spend.
func (s *State) MachinesBySize() map[string]int {
	if s.Provider == nil {
		return nil
	}
	out := map[string]int{}
	for _, g := range s.Provider.Groups {
		out[g.Size] += g.Target
	}
	return out
}

// HeadroomNodes are the nodes headroom may sit on: Ready ones as observed,
// and machines still booting with their size's room.
func (s *State) HeadroomNodes(now time.Time) []types.NodeObservation {
	var out []types.NodeObservation
	if s.Observation != nil {
		for _, n := range s.Observation.Nodes {
			if n.State == types.NodeReady {
				out = append(out, n)
			}
		}
	}
	for _, n := range s.bootingNodes(now) {
		if n.Allocatable != (types.Resources{}) {
			out = append(out, n)
		}
	}
	return out
}

// HourlyCost is what the pool's machines cost per hour, by the provider's
// group targets and the prices of the last plan (0 before any plan).
func (s *State) HourlyCost() float64 {
	total := 0.0
	for key, n := range s.OfferingMachines() {
		total += float64(n) * s.SizePrice[key]
	}
	return total
}
