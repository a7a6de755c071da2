package poolcore

import (
	"github.com/hanzoai/visor-fleet/law"
)

// Rules are the rules a pool run decides and buys with: the law's,
// and those only the pool reads.
type Rules struct {
	law.Rules
	// FewerNodes: the planner buys, among sizes priced at the cheapest
	// plan's rate, the one needing fewest nodes (sizing.Request.FewerNodes).
	FewerNodes bool
	// RebuyRepelled: a pod with hostname-scoped pod-to-pod rules (required
	// anti-affinity by hostname, host ports), still pending beside the
	// roomy node bought for it, may buy again instead of being judged not
	// helped. The node's room was never what refused it: a pod of its own
	// group took the node first (the scheduler binds in its own order),
	// and any new node, a new hostname, admits it (trackPurchases).
	RebuyRepelled bool
	// Offerings: a scale-up buys by offering (capacity type, zone) and an
	// insufficient-capacity answer marks only that offering unavailable
	// for a while (offerings.go; the purchase in workflows/pool_scaleup.go).
	Offerings bool
	// TriedSinceReady: a pod pending beside a roomy new node is judged not
	// helped only once kube-scheduler tried it after the node became Ready
	// (PendingPod.TriedAt); until the backlog's pods were tried since, a
	// new node's free room, and while pods wait for their first try every
	// Ready node's, stays room the next scale-up plans onto; and a new
	// node running pods is the runaway guard's progress. In a burst of
	// thousands the scheduler takes minutes to retry every pod: a fixed
	// grace judged pods refused that were only not tried yet, and bought
	// nothing more for them (trackPurchases, planRoom).
	TriedSinceReady bool
	// NotReadyClock: a node's NotReady time counts from when its Ready
	// condition changed (NodeObservation.ReadyChangedAt), not since the
	// pool first saw it so, as Karpenter's node repair counts.
	NotReadyClock bool
	// ParallelRemoval: a scale-down removes removalsAtOnce nodes at the
	// same time (workflows/pool_removal.go).
	ParallelRemoval bool
	// Buffers: the observation's CapacityBuffers are headroom
	// (types.BufferObservation, withHeadroom).
	Buffers bool
	// LookAhead: a scale-up sizes for the pods pending and the demand the
	// pool runs (law.RunningMix as sizing.Request.Expected): a batch of a
	// few large pods does not buy a larger size dearer per unit that the
	// pool's smaller pods would leave half empty.
	LookAhead bool
	// FreshScaleDown: a scale-down acts only on an observation at most
	// freshScaleDownAge old; an older one is resynced and the decision
	// taken again (workflows/pool_workflow.go act). Two sample intervals were
	// allowed before: a node seen empty or with room 30 s ago may have
	// taken pods since, and draining it, or packing onto its room,
	// strands them.
	FreshScaleDown bool
}

// AllRules is what a new pool run decides and buys with: every rule of
// law.AllRules and every pool rule.
//
// Pre-warm (law.Rules.Prewarm) is on for every new pool run, which carries
// its demand model; law.AllRules leaves it to the scorer to turn on.
func AllRules() Rules {
	r := law.AllRules()
	r.Prewarm = true
	return Rules{Rules: r, FewerNodes: true, RebuyRepelled: true, Offerings: true, TriedSinceReady: true, NotReadyClock: true,
		ParallelRemoval: true, Buffers: true, LookAhead: true, FreshScaleDown: true}
}
