package types

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Policy is one pool's control law. Every number is per pool; the defaults
// are the HIP's.
type Policy struct {
	MinNodes int `json:"minNodes"`
	MaxNodes int `json:"maxNodes"`
	// PendingThreshold: scale up once a pod has been unschedulable this long.
	PendingThreshold Duration `json:"pendingThreshold"`
	// Idle: a node whose requests are below both thresholds for IdleWindow
	// without a break is removed.
	IdleCPUThreshold    float64  `json:"idleCPUThreshold"`
	IdleMemoryThreshold float64  `json:"idleMemoryThreshold"`
	IdleWindow          Duration `json:"idleWindow"`
	ScaleUpCooldown     Duration `json:"scaleUpCooldown"`
	ScaleDownCooldown   Duration `json:"scaleDownCooldown"`
	// SampleInterval is how often the watcher samples the cluster.
	SampleInterval Duration `json:"sampleInterval"`
	// ResyncInterval is the safety resync when nothing changed.
	ResyncInterval Duration `json:"resyncInterval"`
	// StaleAfter: an observation older than this is stale and freezes
	// scale-down. Zero means 2 × ResyncInterval + SampleInterval.
	StaleAfter Duration `json:"staleAfter,omitempty"`
	// AllowedSizes restricts the catalog; empty means every size.
	AllowedSizes []string `json:"allowedSizes,omitempty"`
	// MaxScaleDownPerDecision bounds how many idle (or consolidated) nodes
	// go at once; 0 is no bound.
	MaxScaleDownPerDecision int `json:"maxScaleDownPerDecision,omitempty"`
	// DrainTimeout is the drain deadline after which the node is uncordoned
	// and reported.
	DrainTimeout Duration `json:"drainTimeout,omitempty"`

	// The fields below were added after pools were first recorded; zero
	// means the default (see the Effective methods), so a policy decoded
	// from an older history behaves as documented.

	// ProvisionTimeout: a machine that has not become a Ready node this
	// long after the provider launched it is deleted and its size backed
	// off (cluster-autoscaler's max-node-provision-time). Default 15m.
	ProvisionTimeout Duration `json:"provisionTimeout,omitempty"`
	// UnreadyTimeout: a node NotReady this long is cordoned, drained as
	// far as possible and replaced (scale-down-unready-time). Default 20m.
	UnreadyTimeout Duration `json:"unreadyTimeout,omitempty"`
	// MaxUnreadyFraction: when more than this share of the pool's nodes is
	// unready at once, replacement and scale-down freeze: a mass failure
	// is not fixed by deleting nodes. Default 0.45.
	MaxUnreadyFraction float64 `json:"maxUnreadyFraction,omitempty"`
	// NodeLabels and NodeTaints are what every new node of the pool
	// carries besides the well-known labels; sizing matches pending pods'
	// selectors and tolerations against them.
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	NodeTaints []Taint           `json:"nodeTaints,omitempty"`
	// MaxNodesWithoutProgress bounds the nodes added within
	// ProgressWindow while no pending pod got scheduled onto a new node:
	// the runaway guard. Defaults 10 and 30m.
	MaxNodesWithoutProgress int      `json:"maxNodesWithoutProgress,omitempty"`
	ProgressWindow          Duration `json:"progressWindow,omitempty"`
	// OrgLimits are the pool's org's ceilings across its pools (from the
	// spec file's orgs section); only a platform administrator may change
	// them on a running pool.
	OrgLimits *OrgPolicy `json:"orgLimits,omitempty"`

	// Capacity policies (docs/capacity-policies.md; package capacity
	// evaluates them). Zero or empty turns each off.

	// CapacityWindows are scheduled floors and ceilings.
	CapacityWindows []CapacityWindow `json:"capacityWindows,omitempty"`
	// ProvisioningDelay is how long a new node takes to become Ready:
	// capacity windows raise the floor this much before they open.
	// Default 5m.
	ProvisioningDelay Duration `json:"provisioningDelay,omitempty"`
	// Headroom is room kept free for pods of given shapes.
	Headroom []Headroom `json:"headroom,omitempty"`
	// MaxHourlyCost caps what the pool's nodes cost per hour, in the
	// catalogs' currency (US dollars per hour, after price overrides).
	MaxHourlyCost float64 `json:"maxHourlyCost,omitempty"`
	// Disruption bounds scale-down: nodes draining at once, and when.
	Disruption *DisruptionBudget `json:"disruption,omitempty"`

	// Consolidation removes a Ready node that is not idle but whose pods
	// the other nodes have room for (Karpenter's "delete" consolidation)
	// unless DisableConsolidation says otherwise.

	// ConsolidationThreshold: only nodes whose CPU, memory and GPU
	// requests are each below this fraction of allocatable are
	// consolidated. A written policy gets 1 (every node whose pods fit
	// elsewhere, as Karpenter's WhenEmptyOrUnderutilized), which cost less
	// on every trace of docs/BENCHMARKS.md with no busy removal; a zero
	// left in a policy recorded before means DefaultConsolidationThreshold.
	ConsolidationThreshold float64 `json:"consolidationThreshold,omitempty"`
	// ConsolidateAfter: a node must stay below the threshold this long
	// without a break first. A written policy gets 2m; a zero recorded
	// before means DefaultConsolidateAfter.
	ConsolidateAfter Duration `json:"consolidateAfter,omitempty"`
	// DisableConsolidation turns consolidation off: only idle nodes go.
	DisableConsolidation bool `json:"disableConsolidation,omitempty"`
	// ConsolidationDisruption is how much running work consolidation
	// may disrupt for a saving, as Karpenter's consolidation policies
	// range: DisruptIdleOnly never drains a node running pods (only
	// empty nodes go, nothing is replaced); DisruptBalanced drains nodes
	// or replaces them only when the move's share of the pool's hourly
	// cost saved is at least its share of the pool's pods disrupted
	// (Karpenter's Balanced); DisruptAlways (the default, empty) takes
	// every saving whose pods surely find room, as Karpenter's
	// WhenEmptyOrUnderutilized. No setting strands a pod.
	ConsolidationDisruption string `json:"consolidationDisruption,omitempty"`

	// SizingObjective is what a scale-up minimizes once every pod it can
	// hold is placed: SizingCost (the default) buys the cheapest plan,
	// SizingNodes the plan with the fewest new nodes (then the cheapest),
	// for pools that pay per node as well as per size (per-node licences,
	// IP or kubelet limits) or want fewer, fuller nodes. On catalogs whose
	// larger sizes cost more per unit the two pull apart: docs/BENCHMARKS.md
	// scores both.
	SizingObjective string `json:"sizingObjective,omitempty"`

	// Offerings (policy_offerings.go): how and where nodes are bought.

	// CapacityTypes are the capacity types the pool may buy, in order of
	// preference: empty is [on-demand]; [spot, on-demand] buys spot and
	// falls back to on demand when no spot offering is available.
	CapacityTypes []CapacityType `json:"capacityTypes,omitempty"`
	// Zones are the zones the pool may buy in; empty is every zone the
	// catalog offers.
	Zones []string `json:"zones,omitempty"`
	// MaxSpotShare caps the share of the pool's nodes that may be spot
	// (0.5 or "50%"); zero is no cap.
	MaxSpotShare Share `json:"maxSpotShare,omitempty"`

	// Node lifecycle (policy_lifecycle.go). Zero turns each off.

	// ExpireAfter: a node older than this is expired and replaced (buy
	// first, drain once the new node holds its pods), within the
	// disruption budget. A written policy gets DefaultExpireAfter (720h);
	// a zero recorded before means never.
	ExpireAfter Duration `json:"expireAfter,omitempty"`
	// TerminationGracePeriod bounds how long a drifted or expired node
	// may be held by what blocks its drain (a PodDisruptionBudget, a
	// do-not-disrupt pod): this long after it was first due, it is
	// drained as far as it goes and deleted regardless. Zero: no bound.
	TerminationGracePeriod Duration `json:"terminationGracePeriod,omitempty"`

	// PriceAdjustments change what the pool's sizes cost (commitments,
	// negotiated discounts; price_adjust.go), after the spec's
	// priceOverrides, which win for the sizes they name.
	PriceAdjustments []PriceAdjustment `json:"priceAdjustments,omitempty"`
}

// The consolidation disruption settings (Policy.ConsolidationDisruption).
const (
	DisruptIdleOnly = "idle-only"
	DisruptBalanced = "balanced"
	DisruptAlways   = "always"
)

// The sizing objectives (Policy.SizingObjective).
const (
	SizingCost  = "cost"
	SizingNodes = "nodes"
)

// Bounds every policy must stay within, so arithmetic on them cannot
// overflow and no typo pins a pool (a year-long resync, a billion nodes).
const (
	MaxPolicyNodes    = 10000
	MaxPolicyDuration = 7 * 24 * time.Hour
	// MaxSampleInterval bounds how rarely a cluster is sampled and a pool
	// resynced: anything longer is a stuck pool, not a policy.
	MaxSampleInterval = 24 * time.Hour
)

// DefaultPolicy returns the HIP's numbers, with the changes the scores of
// docs/BENCHMARKS.md support: every idle node may go in one decision (the
// HIP: one), the cooldown after scale-down is 30s (the HIP: 10m) and there
// is no cooldown after scale-up (the HIP: 5m): the planner counts the room
// on nodes still booting and the runaway guard bounds repeated buying, so
// a cooldown only made new demand wait (every trace met the wait target
// without it, at the same node-hours).
// Defaults are applied where a policy is written (the spec file, the
// client), never inside workflow code, so recorded runs keep theirs.
func DefaultPolicy() Policy {
	p := HIPPolicy()
	p.MaxScaleDownPerDecision = 0
	p.ScaleDownCooldown = Duration(DefaultScaleDownCooldown)
	p.ScaleUpCooldown = 0
	p.ConsolidationThreshold = WrittenConsolidationThreshold
	p.ConsolidateAfter = Duration(WrittenConsolidateAfter)
	p.ExpireAfter = Duration(DefaultExpireAfter)
	return p
}

// What DefaultPolicy writes for consolidation: every node whose pods fit
// elsewhere, after 2m (docs/BENCHMARKS.md, the variant rows). The law's
// own zero defaults (DefaultConsolidationThreshold, DefaultConsolidateAfter)
// stay as they were, so a run recorded with zeros decides as it did.
const (
	WrittenConsolidationThreshold = 1.0
	WrittenConsolidateAfter       = 2 * time.Minute
)

// HIPPolicy returns the HIP's own numbers, which the seed rule is scored with.
func HIPPolicy() Policy {
	return Policy{
		MinNodes:                2,
		MaxNodes:                50,
		PendingThreshold:        Duration(60 * time.Second),
		IdleCPUThreshold:        0.30,
		IdleMemoryThreshold:     0.40,
		IdleWindow:              Duration(10 * time.Minute),
		ScaleUpCooldown:         Duration(5 * time.Minute),
		ScaleDownCooldown:       Duration(10 * time.Minute),
		SampleInterval:          Duration(30 * time.Second),
		ResyncInterval:          Duration(5 * time.Minute),
		MaxScaleDownPerDecision: 1,
		DrainTimeout:            Duration(10 * time.Minute),
	}
}

// DefaultScaleDownCooldown is what DefaultPolicy writes for the cooldown
// after scale-down: one sample interval, enough for the evicted pods to
// bind and the next sample to show where. It was 2m before the law packed
// a decision's removals for any scheduler order (law.Rules.PackAnyOrder):
// that rule leaves for the next decision a node whose pods might take
// another's room, and a long cooldown kept it (docs/BENCHMARKS.md).
const DefaultScaleDownCooldown = 30 * time.Second

// Defaults of the fields whose zero means "default".
const (
	DefaultProvisionTimeout        = 15 * time.Minute
	DefaultUnreadyTimeout          = 20 * time.Minute
	DefaultMaxUnreadyFraction      = 0.45
	DefaultMaxNodesWithoutProgress = 10
	DefaultProgressWindow          = 30 * time.Minute
	DefaultConsolidationThreshold  = 0.7
	DefaultConsolidateAfter        = 5 * time.Minute
)

// EffectiveConsolidation resolves the zero defaults of consolidation;
// enabled is false when the policy turns it off.
func (p Policy) EffectiveConsolidation() (enabled bool, threshold float64, after time.Duration) {
	threshold = p.ConsolidationThreshold
	if threshold <= 0 {
		threshold = DefaultConsolidationThreshold
	}
	return !p.DisableConsolidation, threshold, orDefault(p.ConsolidateAfter.D(), DefaultConsolidateAfter)
}

// EffectiveProvisionTimeout resolves the zero default.
func (p Policy) EffectiveProvisionTimeout() time.Duration {
	return orDefault(p.ProvisionTimeout.D(), DefaultProvisionTimeout)
}

// EffectiveUnreadyTimeout resolves the zero default.
func (p Policy) EffectiveUnreadyTimeout() time.Duration {
	return orDefault(p.UnreadyTimeout.D(), DefaultUnreadyTimeout)
}

// EffectiveMaxUnreadyFraction resolves the zero default.
func (p Policy) EffectiveMaxUnreadyFraction() float64 {
	if p.MaxUnreadyFraction > 0 {
		return p.MaxUnreadyFraction
	}
	return DefaultMaxUnreadyFraction
}

// EffectiveRunawayGuard resolves the zero defaults of the runaway guard.
func (p Policy) EffectiveRunawayGuard() (nodes int, window time.Duration) {
	nodes = p.MaxNodesWithoutProgress
	if nodes <= 0 {
		nodes = DefaultMaxNodesWithoutProgress
	}
	return nodes, orDefault(p.ProgressWindow.D(), DefaultProgressWindow)
}

// EffectiveRunawayGuardWindow is the runaway guard's window alone.
func (p Policy) EffectiveRunawayGuardWindow() time.Duration {
	_, w := p.EffectiveRunawayGuard()
	return w
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// EffectiveStaleAfter resolves the zero default.
func (p Policy) EffectiveStaleAfter() time.Duration {
	if p.StaleAfter > 0 {
		return p.StaleAfter.D()
	}
	return 2*p.ResyncInterval.D() + p.SampleInterval.D()
}

// Validate reports every inconsistency, each naming its field.
func (p Policy) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("policy.%s: %s", field, fmt.Sprintf(format, a...)))
	}
	if p.MinNodes < 0 {
		bad("minNodes", "must be >= 0, got %d", p.MinNodes)
	}
	if p.MaxNodes < 1 {
		bad("maxNodes", "must be >= 1, got %d", p.MaxNodes)
	}
	if p.MinNodes > p.MaxNodes {
		bad("minNodes", "%d is greater than maxNodes %d", p.MinNodes, p.MaxNodes)
	}
	if p.MaxNodes > MaxPolicyNodes {
		bad("maxNodes", "must be at most %d, got %d", MaxPolicyNodes, p.MaxNodes)
	}
	for _, d := range []struct {
		name     string
		v        Duration
		min, max time.Duration
	}{
		{"pendingThreshold", p.PendingThreshold, 0, MaxPolicyDuration},
		{"idleWindow", p.IdleWindow, 0, MaxPolicyDuration},
		{"scaleUpCooldown", p.ScaleUpCooldown, 0, MaxPolicyDuration},
		{"scaleDownCooldown", p.ScaleDownCooldown, 0, MaxPolicyDuration},
		{"sampleInterval", p.SampleInterval, time.Second, MaxSampleInterval},
		{"resyncInterval", p.ResyncInterval, time.Second, MaxSampleInterval},
		{"staleAfter", p.StaleAfter, 0, MaxPolicyDuration},
		{"drainTimeout", p.DrainTimeout, 0, MaxPolicyDuration},
		{"provisionTimeout", p.ProvisionTimeout, 0, MaxPolicyDuration},
		{"unreadyTimeout", p.UnreadyTimeout, 0, MaxPolicyDuration},
		{"progressWindow", p.ProgressWindow, 0, MaxPolicyDuration},
		{"provisioningDelay", p.ProvisioningDelay, 0, MaxPolicyDuration},
		{"consolidateAfter", p.ConsolidateAfter, 0, MaxPolicyDuration},
	} {
		switch {
		case d.v.D() < 0:
			bad(d.name, "must not be negative, got %s", d.v.D())
		case d.v.D() < d.min:
			bad(d.name, "must be at least %s, got %s", d.min, d.v.D())
		case d.v.D() > d.max:
			bad(d.name, "must be at most %s, got %s", d.max, d.v.D())
		}
	}
	if p.MaxUnreadyFraction < 0 || p.MaxUnreadyFraction > 1 {
		bad("maxUnreadyFraction", "must be within [0, 1], got %v", p.MaxUnreadyFraction)
	}
	if math.IsNaN(p.ConsolidationThreshold) || p.ConsolidationThreshold < 0 || p.ConsolidationThreshold > 1 {
		bad("consolidationThreshold", "must be within (0, 1] (0: the default %v), got %v", DefaultConsolidationThreshold, p.ConsolidationThreshold)
	}
	switch p.ConsolidationDisruption {
	case "", DisruptIdleOnly, DisruptBalanced, DisruptAlways:
	default:
		bad("consolidationDisruption", "must be %q, %q or %q (empty: %q), got %q", DisruptIdleOnly, DisruptBalanced, DisruptAlways, DisruptAlways, p.ConsolidationDisruption)
	}
	if p.SizingObjective != "" && p.SizingObjective != SizingCost && p.SizingObjective != SizingNodes {
		bad("sizingObjective", "must be %q or %q (empty: %q), got %q", SizingCost, SizingNodes, SizingCost, p.SizingObjective)
	}
	if p.MaxNodesWithoutProgress < 0 || p.MaxNodesWithoutProgress > MaxPolicyNodes {
		bad("maxNodesWithoutProgress", "must be within [0, %d], got %d", MaxPolicyNodes, p.MaxNodesWithoutProgress)
	}
	errs = append(errs, validateNodeTemplate(p.NodeLabels, p.NodeTaints)...)
	if p.OrgLimits != nil {
		if err := p.OrgLimits.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("policy.orgLimits: %w", err))
		}
		if o := p.OrgLimits; o.MaxPools != 0 || o.AppliesPerMinute != 0 || o.SignalsPerSecond != 0 {
			errs = append(errs, errors.New("policy.orgLimits: maxPools, appliesPerMinute and signalsPerSecond are the platform's quotas (the worker's clusters file, orgs:), not a pool's"))
		}
	}
	errs = append(errs, p.validateCapacity()...)
	errs = append(errs, p.validateOfferings()...)
	errs = append(errs, p.validateLifecycle()...)
	if err := ValidatePriceAdjustments("policy.priceAdjustments", p.PriceAdjustments, false); err != nil {
		errs = append(errs, err)
	}
	if p.IdleCPUThreshold < 0 || p.IdleCPUThreshold > 1 {
		bad("idleCPUThreshold", "must be within [0, 1], got %v", p.IdleCPUThreshold)
	}
	if p.IdleMemoryThreshold < 0 || p.IdleMemoryThreshold > 1 {
		bad("idleMemoryThreshold", "must be within [0, 1], got %v", p.IdleMemoryThreshold)
	}
	if p.MaxScaleDownPerDecision < 0 || p.MaxScaleDownPerDecision > MaxPolicyNodes {
		bad("maxScaleDownPerDecision", "must be within [0, %d], got %d", MaxPolicyNodes, p.MaxScaleDownPerDecision)
	}
	if p.StaleAfter > 0 && p.StaleAfter.D() < p.SampleInterval.D() {
		bad("staleAfter", "%s is shorter than sampleInterval %s: every observation would be stale", p.StaleAfter.D(), p.SampleInterval.D())
	}
	if len(p.AllowedSizes) > maxAllowedSizes {
		bad("allowedSizes", "lists %d sizes, at most %d", len(p.AllowedSizes), maxAllowedSizes)
	}
	for i, s := range p.AllowedSizes {
		if s == "" || len(s) > 253 {
			bad(fmt.Sprintf("allowedSizes[%d]", i), "must be a size name of 1 to 253 characters")
		}
	}
	return errors.Join(errs...)
}

// WithDefaults fills zero fields from DefaultPolicy, so a policy built in
// code may give only what it changes. MinNodes of zero is kept when
// MaxNodes is set. Use WithDefaultsExcept when it is known which fields
// were written, so a written zero stays zero.
func (p Policy) WithDefaults() Policy { return p.WithDefaultsExcept(nil) }

// WithDefaultsExcept fills zero fields from DefaultPolicy except those
// named (by lower-cased JSON name) in explicit: a spec that says `scaleUpCooldown: 0s`
// means no cooldown, not the default one. A nil explicit knows nothing.
func (p Policy) WithDefaultsExcept(explicit map[string]bool) Policy {
	d := DefaultPolicy()
	// JSON field names match case-insensitively, as encoding/json does.
	unset := func(name string) bool { return !explicit[strings.ToLower(name)] }
	if explicit == nil {
		if p.MaxNodes == 0 && p.MinNodes == 0 {
			p.MinNodes, p.MaxNodes = d.MinNodes, d.MaxNodes
		}
	} else if unset("minNodes") && p.MinNodes == 0 {
		p.MinNodes = d.MinNodes
		if !unset("maxNodes") {
			p.MinNodes = min(d.MinNodes, p.MaxNodes)
		}
	}
	if p.MaxNodes == 0 && unset("maxNodes") {
		p.MaxNodes = d.MaxNodes
	}
	setD := func(name string, v *Duration, def Duration) {
		if *v == 0 && unset(name) {
			*v = def
		}
	}
	setD("pendingThreshold", &p.PendingThreshold, d.PendingThreshold)
	setD("idleWindow", &p.IdleWindow, d.IdleWindow)
	setD("scaleUpCooldown", &p.ScaleUpCooldown, d.ScaleUpCooldown)
	setD("scaleDownCooldown", &p.ScaleDownCooldown, d.ScaleDownCooldown)
	setD("sampleInterval", &p.SampleInterval, d.SampleInterval)
	setD("resyncInterval", &p.ResyncInterval, d.ResyncInterval)
	setD("drainTimeout", &p.DrainTimeout, d.DrainTimeout)
	if p.IdleCPUThreshold == 0 && unset("idleCPUThreshold") {
		p.IdleCPUThreshold = d.IdleCPUThreshold
	}
	if p.IdleMemoryThreshold == 0 && unset("idleMemoryThreshold") {
		p.IdleMemoryThreshold = d.IdleMemoryThreshold
	}
	if p.ConsolidationThreshold == 0 && unset("consolidationThreshold") {
		p.ConsolidationThreshold = d.ConsolidationThreshold
	}
	setD("consolidateAfter", &p.ConsolidateAfter, d.ConsolidateAfter)
	setD("expireAfter", &p.ExpireAfter, d.ExpireAfter)
	if p.MaxScaleDownPerDecision == 0 && unset("maxScaleDownPerDecision") {
		p.MaxScaleDownPerDecision = d.MaxScaleDownPerDecision
	}
	return p
}
