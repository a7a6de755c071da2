// Package poolcore is the pool's durable state and every change to it,
// pure: no Temporal, no clock but the one it is handed, no I/O. The pool
// workflow (workflows/pool_*.go) receives inputs and activity results and
// hands each to State.Apply as an event, decides with State.Decide, and
// carries the decision out.
package poolcore

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/types"
)

// State is the pool's durable state: everything a restart must not lose.
type State struct {
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
	// UnderusedSince: since when each node has been below the
	// consolidation threshold without a break.
	UnderusedSince map[string]time.Time `json:"underusedSince,omitempty"`
	// Unplaceable pods were reported as fitting no size, with why.
	Unplaceable map[string]string `json:"unplaceable,omitempty"`
	// DrainBlocked nodes failed to drain; retried after the time.
	DrainBlocked map[string]time.Time `json:"drainBlocked,omitempty"`
	// DrainRefused says why each DrainBlocked node's last drain failed,
	// and DrainTries how many drains of it failed in a row (the backoff).
	DrainRefused map[string]string `json:"drainRefused,omitempty"`
	DrainTries   map[string]int    `json:"drainTries,omitempty"`
	// BlockedTold: the reason last told on each node kept idle, so the
	// DisruptionBlocked Event is told once per reason, not once per pass.
	BlockedTold map[string]string `json:"blockedTold,omitempty"`
	// TargetNodes is the provider-side target summed over the pool's groups.
	TargetNodes int `json:"targetNodes"`
	// ManualTarget is an accepted `scale`/`force-scale` not yet carried out.
	ManualTarget *ManualScale `json:"manualTarget,omitempty"`
	// Gate is the cluster's phase and reachability as last told.
	Gate contract.ClusterGate `json:"gate"`
	// Decisions keeps the most recent decisions for the status query.
	Decisions    []contract.DecisionRecord `json:"decisions,omitempty"`
	LastRejected string                    `json:"lastRejected,omitempty"`
	// MeterCursor is the first hour not yet metered.
	MeterCursor time.Time `json:"meterCursor"`
	// Machines are the provider's machines, created and ended as its
	// reads say: what the meter bills (workflows/pool_meter.go).
	Machines metering.Machines `json:"machines,omitzero"`
	// Tiers is the billing-tier history and lifespan (workflows/pool_tier.go).
	Tiers metering.Tiers `json:"tiers,omitzero"`
	// ContinuedAsNew counts runs, for the status query.
	ContinuedAsNew int `json:"continuedAsNew"`

	// Provider is the provider's own account of the pool's node groups,
	// read on every resync and before acting: the truth for the target and
	// for machines still booting. Nil in runs recorded before it.
	Provider *ProviderView `json:"provider,omitempty"`
	// NotReadySince: nodes that were Ready once and are NotReady now.
	NotReadySince map[string]time.Time `json:"notReadySince,omitempty"`
	// SeenReady are nodes observed Ready at least once, with when.
	SeenReady map[string]time.Time `json:"seenReady,omitempty"`
	// SizeBackoff: sizes whose machines did not join in time are not
	// bought again before the time.
	SizeBackoff map[string]time.Time `json:"sizeBackoff,omitempty"`
	// Removed nodes, with when: an observation sampled before a removal
	// must not bring the node back.
	Removed map[string]time.Time `json:"removed,omitempty"`
	// BoughtFor: pods a scale-up bought nodes for, with the purchase.
	BoughtFor map[string]Purchase `json:"boughtFor,omitempty"`
	// Deferred pods were left out of a scale-up only because it grew
	// another size: the next decision sizes them at once.
	Deferred map[string]bool `json:"deferred,omitempty"`
	// NoHelp pods got a node that became Ready and are still pending.
	NoHelp map[string]string `json:"noHelp,omitempty"`
	// Additions are the recent scale-ups, for the runaway guard;
	// LastProgress is when a pod bought for last got scheduled.
	Additions    []Addition `json:"additions,omitempty"`
	LastProgress time.Time  `json:"lastProgress,omitempty"`
	// Rejected counts refused inputs by kind.
	Rejected map[string]int `json:"rejected,omitempty"`
	// Repairs keeps the most recent corrections made from provider truth.
	Repairs []string `json:"repairs,omitempty"`
	// Nonces of signed requests accepted recently: a replay is refused.
	Nonces map[string]time.Time `json:"nonces,omitempty"`
	// SizeRoom is each allowed size's room for pods, from the last plan:
	// a machine still booting, known by its size only, counts this much.
	SizeRoom map[string]types.Resources `json:"sizeRoom,omitempty"`
	// SizeZones are the zones each size is sold in, from the last plan,
	// for sizes sold zone by zone.
	SizeZones map[string][]string `json:"sizeZones,omitempty"`
	// SizePrice is each allowed size's hourly price, from the last plan.
	SizePrice map[string]float64 `json:"sizePrice,omitempty"`
	// SizeGPUModel is each GPU size's model, from the last plan: what a
	// GPU replacement may buy (law.Rules.ReplaceGPU).
	SizeGPUModel map[string]string `json:"sizeGPUModel,omitempty"`
	// Replacing is the replacement consolidation under way: its new node
	// bought, its old nodes not yet drained (workflows/pool_replace.go).
	Replacing *law.Replacement `json:"replacing,omitempty"`
	// Budget says what the cost budget cut from the last scale-up;
	// OrgNote what the org's ceilings left the last scale-up.
	Budget  string `json:"budget,omitempty"`
	OrgNote string `json:"orgNote,omitempty"`
	// UnavailableOffering: offerings (types.Offering.Key) a buy failed for
	// lack of capacity, not bought again before the time (offerings.go; the purchase in workflows/pool_scaleup.go).
	UnavailableOffering map[string]time.Time `json:"unavailableOffering,omitempty"`
	// HoldTarget is a manual target kept as the floor until HoldUntil.
	HoldTarget int       `json:"holdTarget,omitempty"`
	HoldUntil  time.Time `json:"holdUntil,omitempty"`
	// Notices are the interruption notices acted on, by provider ID, each
	// kept until the time (an hour past its deadline), so a notice read
	// again is acknowledged, not acted on twice.
	Notices map[string]time.Time `json:"notices,omitempty"`
	// GroupTemplates is the node template hash each group was created
	// under, by group ID; DueSince when each drifted or expired node was
	// first found due (workflows/pool_lifecycle.go).
	GroupTemplates map[string]string    `json:"groupTemplates,omitempty"`
	DueSince       map[string]time.Time `json:"dueSince,omitempty"`
	// Demand is the pool's seasonal demand model, learned from its
	// observations (law.Rules.Prewarm, prewarm.go); bounded by
	// law.ForecastSlotsPerWeek.
	Demand *law.DemandModel `json:"demand,omitempty"`
}

// Purchase is a scale-up that bought nodes for a pod.
type Purchase struct {
	Seq  int64     `json:"seq"`
	At   time.Time `json:"at"`
	Size string    `json:"size"`
	// Since is the pod's unschedulable time then: if it changes, the pod
	// changed and the purchase no longer speaks for it.
	Since time.Time `json:"since"`
}

// Addition is one scale-up's node count.
type Addition struct {
	At    time.Time `json:"at"`
	Nodes int       `json:"nodes"`
}

// ManualScale is an accepted explicit target.
type ManualScale struct {
	Seq         int64          `json:"seq"`
	Target      int            `json:"target"`
	Reason      string         `json:"reason"`
	RequestedBy string         `json:"requestedBy"`
	Hold        types.Duration `json:"hold,omitempty"`
}

// MaxDecisionsKept bounds the decision log carried across runs.
const MaxDecisionsKept = 20

func New(spec contract.PoolSpec) *State {
	return &State{
		Policy:       spec.Policy,
		IdleSince:    map[string]time.Time{},
		Unplaceable:  map[string]string{},
		DrainBlocked: map[string]time.Time{},
		// Until the cluster says otherwise, a pool may act: the cluster
		// workflow's gate arrives as soon as it knows the pool.
		Gate: contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true},
	}
}

// EnsureMaps makes a state decoded from JSON safe to write into.
func (s *State) EnsureMaps() {
	if s.IdleSince == nil {
		s.IdleSince = map[string]time.Time{}
	}
	if s.Unplaceable == nil {
		s.Unplaceable = map[string]string{}
	}
	if s.DrainBlocked == nil {
		s.DrainBlocked = map[string]time.Time{}
	}
	for _, m := range []*map[string]string{&s.DrainRefused, &s.BlockedTold} {
		if *m == nil {
			*m = map[string]string{}
		}
	}
	if s.DrainTries == nil {
		s.DrainTries = map[string]int{}
	}
	for _, m := range []*map[string]time.Time{&s.NotReadySince, &s.SeenReady, &s.SizeBackoff, &s.Removed, &s.Nonces, &s.Notices} {
		if *m == nil {
			*m = map[string]time.Time{}
		}
	}
	if s.BoughtFor == nil {
		s.BoughtFor = map[string]Purchase{}
	}
	if s.Deferred == nil {
		s.Deferred = map[string]bool{}
	}
	if s.NoHelp == nil {
		s.NoHelp = map[string]string{}
	}
	if s.Rejected == nil {
		s.Rejected = map[string]int{}
	}
}

func (s *State) Record(r contract.DecisionRecord) {
	if n := len(s.Decisions); n > 0 && repeats(s.Decisions[n-1], r) {
		last := &s.Decisions[n-1]
		last.Repeats++
		last.LastSeq, last.LastAt = r.Seq, r.At
		return
	}
	s.Decisions = append(s.Decisions, r)
	if len(s.Decisions) > MaxDecisionsKept {
		s.Decisions = s.Decisions[len(s.Decisions)-MaxDecisionsKept:]
	}
}

// repeats says whether r is the same decision as last with the same
// outcome, and neither asked the provider for anything: only such a
// decision may fold into the one before it.
func repeats(last, r contract.DecisionRecord) bool {
	return r.Action == last.Action && r.Reason == last.Reason && r.Outcome == last.Outcome &&
		r.RequestedBy == last.RequestedBy && r.Size == last.Size &&
		r.Added == 0 && last.Added == 0 && len(r.Removed) == 0 && len(last.Removed) == 0 &&
		(strings.HasPrefix(r.Outcome, OutcomeNothingBought) || strings.HasPrefix(r.Outcome, OutcomeNothingToAdd))
}

// ObservedNodes counts nodes in the last observation that are not leaving.
func (s *State) ObservedNodes() int { return law.CountNodes(s.Observation, 0) }

// InFlight is nodes asked for at the provider but not yet seen in the
// cluster. With the provider's view it is the provider's target less the
// nodes that registered; without a view (none read yet, or a provider
// answer that carried only its total), the pool's own bookkeeping.
func (s *State) InFlight() int {
	if s.Provider != nil {
		return max(0, s.Provider.Target()-s.registeredNodes())
	}
	return max(0, s.TargetNodes-s.ObservedNodes())
}

// NodeCount is the pool's size for floor, ceiling and manual targets: what
// the provider says when it was read.
func (s *State) NodeCount() int {
	if s.Provider != nil {
		return s.Provider.Target()
	}
	return max(s.TargetNodes, s.ObservedNodes())
}

// registeredNodes counts the provider's machines that are nodes in the
// cluster now (not being deleted).
func (s *State) registeredNodes() int {
	if s.Provider == nil || s.Observation == nil {
		return 0
	}
	nodes := make(map[string]bool, len(s.Observation.Nodes))
	for _, n := range s.Observation.Nodes {
		if n.State != types.NodeDeleting {
			nodes[n.Name] = true
		}
	}
	n := 0
	for _, g := range s.Provider.Groups {
		for _, m := range g.Instances {
			if nodes[m.Name] {
				n++
			}
		}
	}
	return n
}

func (s *State) PendingPods() int {
	if s.Observation == nil {
		return 0
	}
	return s.Observation.PendingCount()
}

// Gate turns the cluster's phase and reachability into what the law may do.
func (s *State) LawGate() law.Gate {
	g := s.Gate
	switch g.Phase {
	case contract.PhaseActive, "":
	case contract.PhaseDraining:
		return law.Gate{AllowScaleUp: false, AllowScaleDown: g.Reachable, Reason: "cluster is draining: no new capacity"}
	case contract.PhasePending:
		return law.Gate{Reason: "cluster is pending: pools do nothing until it is active"}
	case contract.PhaseDisabled:
		return law.Gate{Reason: "cluster is disabled"}
	}
	if !g.Reachable {
		why := "cluster unreachable: scale-down frozen"
		if g.Reason != "" {
			why += " (" + g.Reason + ")"
		}
		return law.Gate{AllowScaleUp: true, AllowScaleDown: false, Reason: why}
	}
	return law.OpenGate()
}

// Outcomes of a scale-up that asked the provider for nothing.
const (
	OutcomeNothingBought = "nothing bought: "
	OutcomeNothingToAdd  = "nothing to add: "
)

// ActionManualScaleUp records a force-scale that buys nodes.
const ActionManualScaleUp = "manual-scale-up"

func (s *State) NextSeq() int64 {
	s.Seq++
	return s.Seq
}

// LeastUsedNodes picks n nodes, emptiest first, by name on ties.
func (s *State) LeastUsedNodes(n int) []string {
	if s.Observation == nil {
		return nil
	}
	nodes := append([]types.NodeObservation(nil), s.Observation.Nodes...)
	sort.Slice(nodes, func(i, j int) bool {
		ui := nodes[i].CPUUtilization() + nodes[i].MemoryUtilization()
		uj := nodes[j].CPUUtilization() + nodes[j].MemoryUtilization()
		if ui != uj {
			return ui < uj
		}
		return nodes[i].Name < nodes[j].Name
	})
	var out []string
	for _, node := range nodes {
		if len(out) == n {
			break
		}
		if node.State != types.NodeDeleting {
			out = append(out, node.Name)
		}
	}
	return out
}

func (s *State) UnplaceableSummary() string {
	if len(s.Unplaceable) == 0 {
		return "no pod needs a new node"
	}
	keys := sortedKeys(s.Unplaceable)
	return fmt.Sprintf("%d pods fit no allowed size (%s: %s)", len(keys), keys[0], s.Unplaceable[keys[0]])
}

// BackedOffSizes are the sizes not to buy now, sorted.
func (s *State) BackedOffSizes(now time.Time) []string {
	var out []string
	for size, until := range s.SizeBackoff {
		if now.Before(until) {
			out = append(out, size)
		} else {
			delete(s.SizeBackoff, size)
		}
	}
	sort.Strings(out)
	return out
}

func (s *State) ResyncInterval() time.Duration {
	return s.Policy.ResyncInterval.D() + s.Policy.SampleInterval.D()
}

func (s *State) NeedsResync(now time.Time) bool {
	return s.Observation == nil || !now.Before(s.ReceivedAt.Add(s.ResyncInterval()))
}

// StateName is the one word the Web UI filters on (VisorState).
func (s *State) StateName(frozen string) string {
	switch {
	case s.Deregistering:
		return contract.StateDeregistering
	case s.Paused:
		return contract.StatePaused
	case s.Gate.Phase == contract.PhaseDisabled || s.Gate.Phase == contract.PhasePending:
		return contract.StateGated
	case frozen != "":
		return contract.StateFrozen
	case s.InFlight() > 0:
		return contract.StateScalingUp
	case s.PendingPods() > 0:
		return contract.StatePending
	case len(s.IdleSince) > 0 && s.ObservedNodes() > s.Policy.MinNodes:
		return contract.StateIdleNodes
	default:
		return contract.StateSteady
	}
}
