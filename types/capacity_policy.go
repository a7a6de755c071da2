package types

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// CapacityWindow is scheduled capacity: from each time Schedule fires, in
// TimeZone, for Duration, the pool's floor is at least MinNodes and, when
// MaxNodes is set, its ceiling at most MaxNodes. The floor is raised one
// provisioning delay (Policy.ProvisioningDelay) before the window opens,
// so the nodes are Ready when it does. Duration is elapsed time: a window
// that spans a daylight-saving change ends that much later in absolute
// time, not at the same wall-clock hour.
type CapacityWindow struct {
	// Name is shown in the status ("weekday office hours"); optional.
	Name string `json:"name,omitempty"`
	// Schedule is a five-field cron expression (minute hour day-of-month
	// month day-of-week) or a descriptor such as @daily; "0 8 * * 1-5" is
	// 08:00 on weekdays.
	Schedule string `json:"schedule"`
	// TimeZone is an IANA zone name ("Europe/Berlin"); empty means UTC.
	TimeZone string   `json:"timeZone,omitempty"`
	Duration Duration `json:"duration"`
	MinNodes int      `json:"minNodes"`
	// MaxNodes, when above zero, caps the pool during the window.
	MaxNodes int `json:"maxNodes,omitempty"`
}

// Headroom keeps room for Pods pods of one shape schedulable at all
// times: the planner sees them as pending demand that never waits for the
// pending threshold, and scale-down keeps the room they need.
type Headroom struct {
	// Name tells the shapes apart in the status and in the virtual pods'
	// names; optional (the index is used).
	Name     string    `json:"name,omitempty"`
	Pods     int       `json:"pods"`
	Requests Resources `json:"requests"`
	// NodeSelector and Tolerations, when given, say which nodes the room
	// must be on, as a pod of that shape would.
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}

// DisruptionBudget bounds how much of the pool scale-down may disrupt at
// once, and when.
type DisruptionBudget struct {
	// MaxDrainingNodes caps the nodes being drained at once; zero is no cap.
	MaxDrainingNodes int `json:"maxDrainingNodes,omitempty"`
	// MaxDrainingPercent caps them as a share of the pool's nodes, rounded
	// up (as PodDisruptionBudgets and Karpenter round); zero is no cap.
	// With both set the smaller wins.
	MaxDrainingPercent int `json:"maxDrainingPercent,omitempty"`
	// Windows say when scale-down may run: with any "allowed" window,
	// only inside one; never inside a "forbidden" one (forbidden wins).
	Windows []DisruptionWindow `json:"windows,omitempty"`
}

// ScaleDownRule is what a disruption window does to scale-down.
type ScaleDownRule string

const (
	ScaleDownAllowed   ScaleDownRule = "allowed"
	ScaleDownForbidden ScaleDownRule = "forbidden"
)

// DisruptionWindow is a time window (cron in a zone, for a duration) when
// scale-down is allowed or forbidden.
type DisruptionWindow struct {
	Name      string        `json:"name,omitempty"`
	Schedule  string        `json:"schedule"`
	TimeZone  string        `json:"timeZone,omitempty"`
	Duration  Duration      `json:"duration"`
	ScaleDown ScaleDownRule `json:"scaleDown"`
}

// OrgPolicy is one org's limits across its pools. It is configured once
// per org in the spec file's top-level `orgs:` section (not per pool or
// per cluster), because it spans every cluster of the fabric; the pools
// of the org learn their share from the org's usage as the cluster (or an
// org) workflow reports it, never by querying each other.
type OrgPolicy struct {
	Org string `json:"org"`
	// MaxNodes caps the org's nodes across every pool on the fabric.
	MaxNodes int `json:"maxNodes,omitempty"`
	// MaxNodesPerCluster caps the org's nodes across its pools on any one
	// cluster.
	MaxNodesPerCluster int `json:"maxNodesPerCluster,omitempty"`
	// MaxHourlyCost caps what the org's nodes cost per hour on the whole
	// fabric, in the catalogs' currency (US dollars per hour).
	MaxHourlyCost float64 `json:"maxHourlyCost,omitempty"`

	// Quotas on the org's tenant callers, the platform's only: the
	// frontend's authorizer enforces them where the requests arrive (a
	// pool's own orgLimits may not set them). 0 takes the frontend's
	// default for tenants.
	//
	// MaxPools caps the org's running pools: a tenant's start of one more
	// is refused.
	MaxPools int `json:"maxPools,omitempty"`
	// AppliesPerMinute caps a tenant's starts and updates of the org's
	// pools (pool apply, set-policy, scale, pause …).
	AppliesPerMinute int `json:"appliesPerMinute,omitempty"`
	// SignalsPerSecond caps a tenant's signals to the org's pools.
	SignalsPerSecond int `json:"signalsPerSecond,omitempty"`
}

// SetsNodeLimits reports whether o limits the org's nodes or cost (what
// the pools obey), not only its frontend quotas.
func (o OrgPolicy) SetsNodeLimits() bool {
	return o.MaxNodes > 0 || o.MaxNodesPerCluster > 0 || o.MaxHourlyCost > 0
}

// OrgsByName indexes org limits by org; nil for none.
func OrgsByName(orgs []OrgPolicy) map[string]OrgPolicy {
	if len(orgs) == 0 {
		return nil
	}
	out := make(map[string]OrgPolicy, len(orgs))
	for _, o := range orgs {
		out[o.Org] = o
	}
	return out
}

// Bounds on the capacity policies, so a typo cannot make a policy
// expensive to evaluate or to carry in workflow state.
const (
	MaxCapacityWindows   = 32
	MaxDisruptionWindows = 32
	MaxHeadroomShapes    = 8
	// MaxHeadroomPods bounds the virtual pods all shapes add together.
	MaxHeadroomPods = 1000
	// MaxWindowDuration bounds a window; longer belongs in minNodes.
	MaxWindowDuration = MaxPolicyDuration
	// MaxHourlyCost bounds a budget, so sums of prices stay exact enough.
	MaxHourlyCost = 1e7
	maxNameLen    = 63
	maxCronLen    = 128
)

// DefaultProvisioningDelay is how early a capacity window raises the floor
// when the policy does not say.
const DefaultProvisioningDelay = 5 * time.Minute

// EffectiveProvisioningDelay resolves the zero default.
func (p Policy) EffectiveProvisioningDelay() time.Duration {
	return orDefault(p.ProvisioningDelay.D(), DefaultProvisioningDelay)
}
