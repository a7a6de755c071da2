package poolcore

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/types"
	corev1 "k8s.io/api/core/v1"
)

// Fold takes an observation that passed every check into the state: it is
// the one place an observation changes what the pool knows (the node
// clocks, idleness, purchases judged, what is forgotten); the meter's
// machines come from provider reads (ProviderRead).
func (s *State) Fold(obs types.PoolObservation, now time.Time, rules Rules) {
	obs = s.withoutRemoved(boundObservation(obs))
	if rules.Buffers {
		var dropped int
		obs.Buffers, dropped = types.BoundBuffers(obs.Buffers)
		obs.Truncated += dropped
	} else {
		obs.Buffers = nil // a run begun before buffers keeps deciding without them
	}
	s.Observation = &obs
	s.ReceivedAt = now
	s.IdleSince = law.UpdateIdleSince(s.Policy, s.IdleSince, obs)
	s.UnderusedSince = law.UpdateUnderusedSince(s.Policy, s.UnderusedSince, obs)
	s.trackNodes(obs)
	if rules.NotReadyClock {
		s.notReadyFromCondition(obs) // unready.go
	}
	s.trackPurchases(obs, now, rules)
	if rules.Prewarm {
		s.observeDemand(obs) // prewarm.go
	}
	s.noteReplacementNode(s.Observation, rules.Rules)
	s.forgetGone(obs)
}

// forgetGone drops what the state keeps about pods and nodes that are no
// longer in the cluster.
func (s *State) forgetGone(obs types.PoolObservation) {
	entries := obs.PendingEntries()
	pods := make(map[string]bool, len(entries))
	for _, pod := range entries {
		pods[pod.Key()] = true
	}
	keepOnly(s.Unplaceable, pods)
	nodes := make(map[string]bool, len(obs.Nodes))
	for _, n := range obs.Nodes {
		nodes[n.Name] = true
	}
	keepOnly(s.DrainBlocked, nodes)
	keepOnly(s.DrainRefused, nodes)
	keepOnly(s.DrainTries, nodes)
	keepOnly(s.BlockedTold, nodes)
}

func ValidateObservation(key types.PoolKey, obs types.PoolObservation) error {
	if obs.Pool != key {
		return fmt.Errorf("observation is for pool %s, not %s", obs.Pool.WorkflowID(), key.WorkflowID())
	}
	if obs.ObservedAt.IsZero() {
		return fmt.Errorf("observation has no observedAt time")
	}
	for _, n := range obs.Nodes {
		if n.Name == "" {
			return fmt.Errorf("observation has a node with no name")
		}
		if n.Allocatable.IsNegative() || n.Requested.IsNegative() {
			return fmt.Errorf("node %s has negative resources", n.Name)
		}
	}
	for _, pod := range obs.PendingPods {
		if pod.Name == "" || pod.Namespace == "" {
			return fmt.Errorf("observation has a pending pod with no namespace/name")
		}
		if pod.Requests.IsNegative() {
			return fmt.Errorf("pending pod %s has negative requests", pod.Key())
		}
		if pod.Count != 0 {
			return fmt.Errorf("pending pod %s has a count: only a shape's unlisted pods are counted", pod.Key())
		}
	}
	if n := obs.PendingCount(); obs.Queued < 0 || obs.Queued > n {
		return fmt.Errorf("observation's queued is %d, must be 0 to its %d pending pods", obs.Queued, n)
	}
	if obs.Unbound < 0 {
		return fmt.Errorf("observation's unbound is %d, must not be negative", obs.Unbound)
	}
	return nil
}

// trackNodes folds an observation into the node clocks: first Ready, and
// NotReady since (only for nodes that were Ready once; a node that never
// was is judged by its machine's provision timeout).
func (s *State) trackNodes(obs types.PoolObservation) {
	present := make(map[string]bool, len(obs.Nodes))
	for _, n := range obs.Nodes {
		present[n.Name] = true
		switch n.State {
		case types.NodeReady, types.NodeCordoned:
			if s.SeenReady[n.Name].IsZero() {
				s.SeenReady[n.Name] = obs.ObservedAt
			}
			delete(s.NotReadySince, n.Name)
		case types.NodeNotReady:
			if !s.SeenReady[n.Name].IsZero() && s.NotReadySince[n.Name].IsZero() {
				s.NotReadySince[n.Name] = obs.ObservedAt
			}
		}
	}
	keepOnly(s.SeenReady, present)
	keepOnly(s.NotReadySince, present)
	for name, at := range s.Removed {
		if !present[name] && obs.ObservedAt.After(at) {
			delete(s.Removed, name)
		}
	}
}

// withoutRemoved drops nodes the pool removed after the observation was
// sampled: a late observation must not bring them back.
func (s *State) withoutRemoved(obs types.PoolObservation) types.PoolObservation {
	if len(s.Removed) == 0 {
		return obs
	}
	kept := make([]types.NodeObservation, 0, len(obs.Nodes))
	for _, n := range obs.Nodes {
		if at, gone := s.Removed[n.Name]; gone && !obs.ObservedAt.After(at) {
			continue
		}
		kept = append(kept, n)
	}
	obs.Nodes = kept
	return obs
}

// trackPurchases judges the pods the pool bought nodes for: one scheduled
// is progress; one still pending, unchanged, beside a node of the bought
// size that has been Ready a while, was not helped by the purchase.
func (s *State) trackPurchases(obs types.PoolObservation, now time.Time, rules Rules) {
	entries := obs.PendingEntries()
	pending := make(map[string]types.PendingPod, len(entries))
	for _, pod := range entries {
		pending[pod.Key()] = pod
	}
	grace := s.noHelpGrace()
	// A burst's purchases are few and its pods few shapes: the nodes are
	// looked at once per purchase and pod size, not once per pod.
	type look struct {
		at       time.Time
		size     string
		requests types.Resources
	}
	type seen struct {
		roomy       string
		empty, full bool
	}
	looked := map[look]seen{}
	for _, key := range sortedKeys(s.BoughtFor) {
		buy := s.BoughtFor[key]
		pod, still := pending[key]
		switch {
		case !still:
			s.LastProgress = now
			delete(s.BoughtFor, key)
		case !pod.UnschedulableSince.Equal(buy.Since):
			delete(s.BoughtFor, key)
		default:
			l := look{buy.At, buy.Size, pod.Requests}
			r, ok := looked[l]
			if !ok {
				r.roomy, r.empty, r.full = readyNodesBoughtAfter(obs, s.SeenReady, buy, pod, now, grace)
				looked[l] = r
			}
			roomy, empty, full := r.roomy, r.empty, r.full
			switch {
			case roomy != "" && rules.TriedSinceReady && !triedSince(pod, s.SeenReady[roomy]):
				// kube-scheduler has not tried the pod since the node
				// became Ready (a backlog of thousands takes minutes to
				// go through): not refused by it, only not tried yet.
			case roomy != "" && !empty && rules.RebuyRepelled && repelledByHostname(pod):
				// Every roomy node bought for it runs pods, and its rules
				// are hostname-scoped: a pod of its own group took the
				// node (kube-scheduler binds in its own order), not room
				// or a rule sizing got wrong. A new node, a new hostname,
				// admits it, so it may buy again.
				delete(s.BoughtFor, key)
			case roomy != "":
				// The node has room for the pod and the scheduler still
				// refused it: our simulation of its constraints was wrong,
				// and buying again would only repeat the mistake.
				s.NoHelp[key] = fmt.Sprintf("scale-up did not help: node %s (%s), bought at %s, has been Ready since %s with room for the pod, and the pod is still pending",
					roomy, buy.Size, buy.At.UTC().Format(time.RFC3339), s.SeenReady[roomy].UTC().Format(time.RFC3339))
				delete(s.BoughtFor, key)
			case full:
				// Its node filled up with other pods: the purchase was
				// right but not enough, so the pod may buy again.
				delete(s.BoughtFor, key)
			}
		}
	}
	if rules.TriedSinceReady && newNodeRunsPods(obs, s.LastProgress) {
		s.LastProgress = now
	}
	for key := range s.NoHelp {
		if pod, ok := pending[key]; !ok || pod.UnschedulableSince.After(now) {
			delete(s.NoHelp, key)
		}
	}
	keepOnly(s.Deferred, pending)
	window := s.Policy.EffectiveRunawayGuardWindow()
	kept := s.Additions[:0]
	for _, add := range s.Additions {
		if now.Sub(add.At) < window {
			kept = append(kept, add)
		}
	}
	s.Additions = kept
}

// newNodeRunsPods says whether a node registered after since runs pods:
// the scheduler is placing pods on capacity bought since, which is the
// progress the runaway guard waits for, whichever pods it placed. In a
// burst the scheduler fills new nodes from a backlog of thousands in its
// own order, and the pods a purchase was for may bind minutes later.
func newNodeRunsPods(obs types.PoolObservation, since time.Time) bool {
	for _, n := range obs.Nodes {
		if n.CreatedAt.After(since) && n.State == types.NodeReady && n.Requested != (types.Resources{}) {
			return true
		}
	}
	return false
}

// triedSince says whether kube-scheduler tried the pod after ready. An
// observer that does not report tries (TriedAt zero) leaves the grace
// alone to judge: nothing says the pod was not tried.
func triedSince(pod types.PendingPod, ready time.Time) bool {
	return pod.TriedAt.IsZero() || pod.TriedAt.After(ready)
}

// readyNodesBoughtAfter looks at the nodes of the purchased size created
// at or after the purchase and Ready for at least grace: it names one with
// free room for the pod (and says whether some such roomy node runs no
// pod at all), or reports that such nodes exist but are full.
func readyNodesBoughtAfter(obs types.PoolObservation, seenReady map[string]time.Time, buy Purchase, pod types.PendingPod, now time.Time, grace time.Duration) (roomy string, empty, full bool) {
	for _, n := range obs.Nodes {
		ready := seenReady[n.Name]
		if n.Size != buy.Size || n.State != types.NodeReady || n.CreatedAt.Before(buy.At.Add(-time.Second)) ||
			ready.IsZero() || now.Before(ready.Add(grace)) {
			continue
		}
		if law.HasRoomFor(n, pod.Requests) {
			if roomy == "" {
				roomy = n.Name
			}
			empty = empty || n.Requested == (types.Resources{})
			continue
		}
		full = true
	}
	if roomy != "" {
		full = false
	}
	return roomy, empty, full
}

// repelledByHostname says whether the pod's placement rules are scoped to
// one node (required anti-affinity by hostname, host ports), so a node
// running pods can refuse it with room to spare while any new node admits it.
func repelledByHostname(pod types.PendingPod) bool {
	s := pod.Scheduling
	if s == nil {
		return false
	}
	if len(s.HostPorts) > 0 {
		return true
	}
	for _, t := range s.AntiAffinity {
		if t.TopologyKey == corev1.LabelHostname {
			return true
		}
	}
	return false
}

// keepOnly deletes the entries whose key is not in present.
func keepOnly[V, P any](m map[string]V, present map[string]P) {
	for key := range m {
		if _, ok := present[key]; !ok {
			delete(m, key)
		}
	}
}

// sortedKeys are m's keys in order: the core's walks over maps decide in
// the same order on every replay.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
