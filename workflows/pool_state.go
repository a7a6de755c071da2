package workflows

import (
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/types"
)

// PoolInput starts or continues a pool workflow. State is nil on first
// start and carried whole through Continue-As-New.
type PoolInput struct {
	Spec  contract.PoolSpec `json:"spec"`
	State *PoolState        `json:"state,omitempty"`
}

// PoolState is the pool's durable state: everything a restart must not lose.
type PoolState struct {
	Policy        types.Policy `json:"policy"`
	Paused        bool         `json:"paused"`
	PausedReason  string       `json:"pausedReason,omitempty"`
	Deregistering bool         `json:"deregistering"`
	// Seq numbers decisions; with the pool ID it makes idempotency keys.
	Seq           int64     `json:"seq"`
	LastScaleUp   time.Time `json:"lastScaleUp"`
	LastScaleDown time.Time `json:"lastScaleDown"`
	// Observation is the newest one received; ReceivedAt is workflow time.
	Observation *types.PoolObservation `json:"observation,omitempty"`
	ReceivedAt  time.Time              `json:"receivedAt"`
	// IdleSince: since when each node has been idle without a break.
	IdleSince map[string]time.Time `json:"idleSince,omitempty"`
	// Unplaceable pods were reported as fitting no size, with why.
	Unplaceable map[string]string `json:"unplaceable,omitempty"`
	// DrainBlocked nodes failed to drain; retried after the time.
	DrainBlocked map[string]time.Time `json:"drainBlocked,omitempty"`
	// TargetNodes is the provider-side target summed over the pool's groups.
	TargetNodes int `json:"targetNodes"`
	// ManualTarget is an accepted `scale`/`force-scale` not yet carried out.
	ManualTarget *ManualScale `json:"manualTarget,omitempty"`
	// Gate is the cluster's phase and reachability as last told.
	Gate contract.ClusterGate `json:"gate"`
	// Decisions keeps the most recent decisions for the status query.
	Decisions    []contract.DecisionRecord `json:"decisions,omitempty"`
	LastRejected string                    `json:"lastRejected,omitempty"`
	// Meter is the node-count timeline and the first hour not yet metered.
	Meter       metering.Timeline `json:"meter"`
	MeterCursor time.Time         `json:"meterCursor"`
	// ContinuedAsNew counts runs, for the status query.
	ContinuedAsNew int `json:"continuedAsNew"`
}

// ManualScale is an accepted explicit target.
type ManualScale struct {
	Seq         int64  `json:"seq"`
	Target      int    `json:"target"`
	Reason      string `json:"reason"`
	RequestedBy string `json:"requestedBy"`
}

// maxDecisionsKept bounds the decision log carried across runs.
const maxDecisionsKept = 20

func newPoolState(spec contract.PoolSpec) *PoolState {
	return &PoolState{
		Policy:       spec.Policy,
		IdleSince:    map[string]time.Time{},
		Unplaceable:  map[string]string{},
		DrainBlocked: map[string]time.Time{},
		// Until the cluster says otherwise, a pool may act: the cluster
		// workflow's gate arrives as soon as it knows the pool.
		Gate: contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true},
	}
}

// ensureMaps makes a state decoded from JSON safe to write into.
func (s *PoolState) ensureMaps() {
	if s.IdleSince == nil {
		s.IdleSince = map[string]time.Time{}
	}
	if s.Unplaceable == nil {
		s.Unplaceable = map[string]string{}
	}
	if s.DrainBlocked == nil {
		s.DrainBlocked = map[string]time.Time{}
	}
}

func (s *PoolState) record(r contract.DecisionRecord) {
	s.Decisions = append(s.Decisions, r)
	if len(s.Decisions) > maxDecisionsKept {
		s.Decisions = s.Decisions[len(s.Decisions)-maxDecisionsKept:]
	}
}

// observedNodes counts nodes in the last observation that are not leaving.
func (s *PoolState) observedNodes() int { return CountNodes(s.Observation, 0) }

// inFlight is nodes asked for at the provider but not yet seen in the cluster.
func (s *PoolState) inFlight() int { return max(0, s.TargetNodes-s.observedNodes()) }

// nodeCount is the pool's size for floor, ceiling and manual targets.
func (s *PoolState) nodeCount() int { return max(s.TargetNodes, s.observedNodes()) }

func (s *PoolState) pendingPods() int {
	if s.Observation == nil {
		return 0
	}
	return len(s.Observation.PendingPods)
}

// gate turns the cluster's phase and reachability into what the law may do.
func (s *PoolState) gate() Gate {
	g := s.Gate
	switch g.Phase {
	case contract.PhaseActive, "":
	case contract.PhaseDraining:
		return Gate{AllowScaleUp: false, AllowScaleDown: g.Reachable, Reason: "cluster is draining: no new capacity"}
	case contract.PhasePending:
		return Gate{Reason: "cluster is pending: pools do nothing until it is active"}
	case contract.PhaseDisabled:
		return Gate{Reason: "cluster is disabled"}
	}
	if !g.Reachable {
		why := "cluster unreachable: scale-down frozen"
		if g.Reason != "" {
			why += " (" + g.Reason + ")"
		}
		return Gate{AllowScaleUp: true, AllowScaleDown: false, Reason: why}
	}
	return OpenGate()
}
