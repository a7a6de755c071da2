package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// PoolSpec is what registers a pool: its key, its policy and where it runs.
type PoolSpec struct {
	Key    types.PoolKey `json:"key"`
	Policy types.Policy  `json:"policy"`
	// ProviderTaskQueue names the task queue the pool's provisioning,
	// drain and observe activities run on. Empty means the default queue;
	// a BYO-cloud pool names a queue served by a worker inside the tenant's
	// own account, so its credentials never leave it.
	ProviderTaskQueue string `json:"providerTaskQueue,omitempty"`
	// Placement constrains which clusters may host the pool.
	Placement Placement `json:"placement,omitempty"`
	// PriceOverrides replace catalog prices per size.
	PriceOverrides map[string]float64 `json:"priceOverrides,omitempty"`
}

// Placement constrains a pool's cluster.
type Placement struct {
	Regions      []string `json:"regions,omitempty"`
	Residency    string   `json:"residency,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"` // mig, nvlink, rdma
}

// Validate checks the spec and names every bad field.
func (s PoolSpec) Validate() error {
	var errs []error
	if err := s.Key.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("key: %w", err))
	}
	if err := s.Policy.Validate(); err != nil {
		errs = append(errs, err)
	}
	if q := s.ProviderTaskQueue; q != "" && strings.TrimSpace(q) != q {
		errs = append(errs, fmt.Errorf("providerTaskQueue %q has surrounding spaces", q))
	}
	for size, price := range s.PriceOverrides {
		if price < 0 {
			errs = append(errs, fmt.Errorf("priceOverrides.%s: price %v is negative", size, price))
		}
	}
	for _, c := range s.Placement.Capabilities {
		switch c {
		case "mig", "nvlink", "rdma":
		default:
			errs = append(errs, fmt.Errorf("placement.capabilities: unknown capability %q (want mig, nvlink or rdma)", c))
		}
	}
	return errors.Join(errs...)
}

// ScaleRequest asks for an explicit target (the `scale` update and the
// `force-scale` signal).
type ScaleRequest struct {
	Target      int    `json:"target"`
	Reason      string `json:"reason"`
	RequestedBy string `json:"requestedBy"`
	// Hold keeps the target as the pool's floor for this long (at most
	// MaxHold); zero means the control law takes over at once.
	Hold types.Duration `json:"hold,omitempty"`
	Auth *Authorization `json:"auth,omitempty"`
}

// MaxHold bounds how long a manual target may hold.
const MaxHold = 7 * 24 * time.Hour

// ScaleAccepted is the `scale` update's answer: the decision as recorded.
type ScaleAccepted struct {
	Seq    int64  `json:"seq"`
	From   int    `json:"from"`
	Target int    `json:"target"`
	Reason string `json:"reason"`
}

// PolicyAccepted is the `set-policy` update's answer.
type PolicyAccepted struct {
	Policy types.Policy `json:"policy"`
}

// PauseRequest says who paused or resumed the pool and why.
type PauseRequest struct {
	Reason      string         `json:"reason,omitempty"`
	RequestedBy string         `json:"requestedBy,omitempty"`
	Auth        *Authorization `json:"auth,omitempty"`
}

// DeregisterRequest asks the pool to drain its nodes and complete.
type DeregisterRequest struct {
	Reason      string         `json:"reason,omitempty"`
	RequestedBy string         `json:"requestedBy,omitempty"`
	Auth        *Authorization `json:"auth,omitempty"`
}

// ClusterPhase is a cluster's declared phase.
type ClusterPhase string

const (
	PhasePending  ClusterPhase = "pending"
	PhaseActive   ClusterPhase = "active"
	PhaseDraining ClusterPhase = "draining"
	PhaseDisabled ClusterPhase = "disabled"
)

// ClusterGate is what the cluster workflow tells its pools.
type ClusterGate struct {
	Phase     ClusterPhase `json:"phase"`
	Reachable bool         `json:"reachable"`
	Region    string       `json:"region,omitempty"`
	// Tier is the cluster's billing tier (empty from clusters declared
	// before tiers: managed).
	Tier BillingTier `json:"tier,omitempty"`
	// Reason says why the cluster holds its pools back, when it does.
	Reason string `json:"reason,omitempty"`
	// Since orders gate signals; an older one is ignored.
	Since time.Time `json:"since"`
}

// DecisionRecord is one decision as the pool carried it out.
type DecisionRecord struct {
	Seq         int64     `json:"seq"`
	At          time.Time `json:"at"`
	Action      string    `json:"action"`
	Reason      string    `json:"reason"`
	Size        string    `json:"size,omitempty"`
	Added       int       `json:"added,omitempty"`
	Removed     []string  `json:"removed,omitempty"`
	Outcome     string    `json:"outcome"`
	RequestedBy string    `json:"requestedBy,omitempty"`
	// Repeats counts the identical decisions after this one that changed
	// nothing (the same "nothing bought" while a budget holds): they update
	// this record rather than fill the window. The newest was LastSeq at LastAt.
	Repeats int       `json:"repeats,omitempty"`
	LastSeq int64     `json:"lastSeq,omitempty"`
	LastAt  time.Time `json:"lastAt,omitempty"`
}

// Newest is the decision number and time of the record's newest decision.
func (d DecisionRecord) Newest() (int64, time.Time) {
	if d.Repeats == 0 {
		return d.Seq, d.At
	}
	return d.LastSeq, d.LastAt
}

// PoolStatus is the `status` query's answer: the pool's full state.
type PoolStatus struct {
	Key               types.PoolKey        `json:"key"`
	State             string               `json:"state"`
	Policy            types.Policy         `json:"policy"`
	Paused            bool                 `json:"paused"`
	PausedReason      string               `json:"pausedReason,omitempty"`
	Deregistering     bool                 `json:"deregistering"`
	Nodes             int                  `json:"nodes"`
	TargetNodes       int                  `json:"targetNodes"`
	PendingPods       int                  `json:"pendingPods"`
	Seq               int64                `json:"seq"`
	LastScaleUp       time.Time            `json:"lastScaleUp,omitempty"`
	LastScaleDown     time.Time            `json:"lastScaleDown,omitempty"`
	LastObservationAt time.Time            `json:"lastObservationAt,omitempty"`
	IdleSince         map[string]time.Time `json:"idleSince,omitempty"`
	Unplaceable       map[string]string    `json:"unplaceable,omitempty"`
	// DrainBlocked: idle nodes something keeps, each with why (the pod
	// and the rule: a drain blocker, a refused drain and when it is
	// retried, the disruption budget or window, the floor).
	DrainBlocked   map[string]string      `json:"drainBlocked,omitempty"`
	Frozen         string                 `json:"frozen,omitempty"`
	Blocked        []string               `json:"blocked,omitempty"`
	NextWake       time.Time              `json:"nextWake,omitempty"`
	NextWakeReason string                 `json:"nextWakeReason,omitempty"`
	Cluster        ClusterGate            `json:"cluster"`
	Decisions      []DecisionRecord       `json:"decisions,omitempty"`
	LastRejected   string                 `json:"lastRejected,omitempty"`
	Observation    *types.PoolObservation `json:"observation,omitempty"`
	MeteredThrough time.Time              `json:"meteredThrough,omitempty"`
	// Tier is the billing tier the pool meters under now, from its
	// cluster; TierSince is when it took effect (zero: since the start).
	Tier           BillingTier `json:"tier"`
	TierSince      time.Time   `json:"tierSince,omitempty"`
	ContinuedAsNew int         `json:"continuedAsNew"`

	// Provider truth: the target the provider reported and when, and the
	// machines asked for that are not nodes yet.
	ProviderTarget int       `json:"providerTarget,omitempty"`
	ProviderReadAt time.Time `json:"providerReadAt,omitempty"`
	InFlight       int       `json:"inFlight"`
	// NoHelp pods got a node that became Ready and stayed pending: they buy
	// nothing more until they change (the runaway guard), with why.
	NoHelp map[string]string `json:"noHelp,omitempty"`
	// AddedWithoutProgress: nodes added in the guard's window while no pod
	// bought for got scheduled.
	AddedWithoutProgress int `json:"addedWithoutProgress,omitempty"`
	// Deferred counts pods sized by the next decision (another size).
	Deferred int `json:"deferred,omitempty"`
	// SizeBackoff: sizes not bought before the time (machines that never joined).
	SizeBackoff map[string]time.Time `json:"sizeBackoff,omitempty"`
	// UnavailableOffering: offerings ("m6i.large/us-east-1b/spot") a buy
	// failed for lack of capacity, not bought again before the time.
	UnavailableOffering map[string]time.Time `json:"unavailableOffering,omitempty"`
	// NotReadySince: nodes once Ready, NotReady now, since when.
	NotReadySince map[string]time.Time `json:"notReadySince,omitempty"`
	// Repairs are the latest corrections made from provider truth.
	Repairs []string `json:"repairs,omitempty"`
	// Rejected counts refused inputs by kind (observe, force-scale, ...).
	Rejected map[string]int `json:"rejected,omitempty"`
	// SkippedNodes are idle nodes scale-down passed over, with why.
	SkippedNodes []string `json:"skippedNodes,omitempty"`
	// HeldIdle are idle nodes past their idle window the last decision
	// kept, each with the rule that keeps it (disruption budget or
	// window, cooldown, floor) and until when.
	HeldIdle map[string]string `json:"heldIdle,omitempty"`
	// Removing is the scale-down under way, while its nodes are drained
	// and deleted: without it a long removal shows nothing until its
	// decision is recorded at the end.
	Removing *Removal `json:"removing,omitempty"`
	// Capacity sums up the capacity policies in force now (windows,
	// headroom, budget, disruption); Budget says what the cost budget cut
	// from the last scale-up, with the amounts.
	Capacity string `json:"capacity,omitempty"`
	Budget   string `json:"budget,omitempty"`
	// OrgCeiling says what the org's ceilings left the last scale-up.
	OrgCeiling string `json:"orgCeiling,omitempty"`
	// Forecast says what the pool's demand model has learned, how far off
	// it is, and the last node bought on forecast and whether the
	// forecast came true (predictive pre-warm).
	Forecast string `json:"forecast,omitempty"`
	// HoldTarget holds as the floor until HoldUntil (a manual scale's --hold).
	HoldTarget int       `json:"holdTarget,omitempty"`
	HoldUntil  time.Time `json:"holdUntil,omitempty"`
	// Drifted and Expired count the nodes due for replacement now (a node
	// may be both); Due lists each with why (law.DueNodes).
	Drifted int      `json:"drifted,omitempty"`
	Expired int      `json:"expired,omitempty"`
	Due     []string `json:"due,omitempty"`
}

// Removal is a scale-down decision in progress.
type Removal struct {
	Seq    int64     `json:"seq"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	Nodes  int       `json:"nodes"`
	Done   int       `json:"done"`
	Failed int       `json:"failed,omitempty"`
	// InHand are the nodes being drained or deleted now, each with its
	// step ("drain" or "delete") and since when.
	InHand map[string]string `json:"inHand,omitempty"`
}
