package metering

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// The meters a pool reports under: a managed pool's node-hours per size,
// or a bring-your-own pool's management-plane pool-hours (its nodes are
// billed by the tenant's own cloud, HIP-0121 Tier A).
const (
	MeterNodeHours = "visor.node-hours"
	MeterPoolHours = "visor.management-plane.pool-hours"
)

// Dimension names carried by every event, as the HIP's MeterEvent has
// them; the same values are also top-level fields of Event.
const (
	DimService  = "service"
	DimProject  = "project"
	DimProvider = "provider"
	DimCluster  = "cluster"
	DimSize     = "size"
	DimPool     = "pool"
	DimTier     = "tier"
	// DimNodeHours is, on a pool-hours event, the node-hours the tenant's
	// cloud ran that hour: for information, not the billed value.
	DimNodeHours = "nodeHours"
)

// hourKeyLayout is the hour part of an idempotency key: YYYY-MM-DDTHH, UTC.
const hourKeyLayout = "2006-01-02T15"

// poolHoursKeySuffix ends a pool-hours key; no node-hours key ends so,
// since those end with the hour.
const poolHoursKeySuffix = "management-plane"

// Event is the HIP's MeterEvent for one pool and hour (and, for
// node-hours, one size). UserID is the org; the hour is carried explicitly
// so a back-filled hour is billed to the hour it happened, not the hour it
// was sent. Every event says what it bills: its meter, tier, org, project,
// pool, provider, cluster and size.
type Event struct {
	MeterID     string               `json:"meterId"`
	UserID      string               `json:"userId"`
	Tier        contract.BillingTier `json:"tier"`
	Project     string               `json:"project"`
	PoolID      string               `json:"poolId"`
	Provider    string               `json:"provider"`
	Cluster     string               `json:"cluster"`
	Size        string               `json:"size,omitempty"` // node-hours only
	Value       float64              `json:"value"`
	Hour        time.Time            `json:"hour"`
	Idempotency string               `json:"idempotency"`
	Dimensions  map[string]string    `json:"dimensions"`
}

// IdempotencyKey is "<pool workflow ID>/<size>/<YYYY-MM-DDTHH>" for the
// UTC hour containing hour: a node-hours event's key.
func IdempotencyKey(pool types.PoolKey, size string, hour time.Time) string {
	return pool.WorkflowID() + "/" + size + "/" + hour.UTC().Truncate(time.Hour).Format(hourKeyLayout)
}

// PoolHoursKey is "<pool workflow ID>/<YYYY-MM-DDTHH>/management-plane":
// a pool-hours event's key, one per pool and hour.
func PoolHoursKey(pool types.PoolKey, hour time.Time) string {
	return pool.WorkflowID() + "/" + hour.UTC().Truncate(time.Hour).Format(hourKeyLayout) + "/" + poolHoursKeySuffix
}

// EventsForHour builds one managed node-hours event per size that ran in
// the UTC hour containing hour, ordered by size. An hour with no nodes
// yields none.
func EventsForHour(pool types.PoolKey, t Timeline, hour time.Time) []Event {
	start := hour.UTC().Truncate(time.Hour)
	return NodeHourEvents(pool, NodeHours(t, start), start)
}

// NodeHourEvents builds one managed node-hours event per size in perSize
// (node-hours that ran in the UTC hour containing hour), ordered by size;
// sizes at zero yield none.
func NodeHourEvents(pool types.PoolKey, perSize map[string]float64, hour time.Time) []Event {
	start := hour.UTC().Truncate(time.Hour)
	sizes := make([]string, 0, len(perSize))
	for size := range perSize {
		sizes = append(sizes, size)
	}
	slices.Sort(sizes)
	events := make([]Event, 0, len(sizes))
	for _, size := range sizes {
		if perSize[size] <= 0 {
			continue
		}
		e := newEvent(pool, contract.TierManaged, MeterNodeHours, start, perSize[size], IdempotencyKey(pool, size, start))
		// A node bought on demand anywhere keeps the event it had before
		// offerings (no capacity_type: on demand); others name theirs.
		base, ct, zone := splitOfferingSize(size)
		e.Size, e.Dimensions[DimSize] = base, base
		if base != size {
			e.Dimensions[DimCapacityType] = string(ct)
		}
		if zone != "" {
			e.Dimensions[DimZone] = zone
		}
		events = append(events, e)
	}
	return events
}

// EventsForTieredHour builds the hour's events under the tier that held
// for it (Tiers.ForHour): a managed hour bills node-hours per size, a BYO
// hour one management-plane event whose value is the part of the hour
// the pool existed, with the node-hours that ran as a dimension only.
func EventsForTieredHour(pool types.PoolKey, t Timeline, tiers Tiers, hour time.Time) []Event {
	start := hour.UTC().Truncate(time.Hour)
	return TieredEvents(pool, NodeHours(t, start), tiers, start)
}

// TieredEvents is EventsForTieredHour for node-hours per size already
// worked out (from a Timeline or from Machines).
func TieredEvents(pool types.PoolKey, perSize map[string]float64, tiers Tiers, hour time.Time) []Event {
	start := hour.UTC().Truncate(time.Hour)
	if tiers.ForHour(start) != contract.TierBYO {
		return NodeHourEvents(pool, perSize, start)
	}
	value := tiers.PoolHours(start)
	if value == 0 {
		return nil
	}
	e := newEvent(pool, contract.TierBYO, MeterPoolHours, start, value, PoolHoursKey(pool, start))
	nodeHours := 0.0
	for _, size := range slices.Sorted(maps.Keys(perSize)) {
		nodeHours += perSize[size] // in order, so the sum replays bit for bit
	}
	e.Dimensions[DimNodeHours] = strconv.FormatFloat(nodeHours, 'f', -1, 64)
	return []Event{e}
}

func newEvent(pool types.PoolKey, tier contract.BillingTier, meter string, hour time.Time, value float64, key string) Event {
	return Event{
		MeterID: meter, UserID: pool.Org, Tier: tier, Project: pool.Project, PoolID: pool.WorkflowID(),
		Provider: pool.Provider, Cluster: pool.Cluster, Value: value, Hour: hour, Idempotency: key,
		Dimensions: map[string]string{
			DimService:  pool.Service,
			DimProject:  pool.Project,
			DimProvider: pool.Provider,
			DimCluster:  pool.Cluster,
			DimPool:     pool.WorkflowID(),
			DimTier:     string(tier),
		},
	}
}

// filled is the event with its top-level fields taken from its
// dimensions where empty: an activity scheduled by a worker from before
// these fields existed still reports what it bills. Node-hours events
// without a tier are managed (the only tier then).
func (e Event) filled() Event {
	fill := func(field *string, dim string) {
		if *field == "" {
			*field = e.Dimensions[dim]
		}
	}
	fill(&e.Project, DimProject)
	fill(&e.PoolID, DimPool)
	fill(&e.Provider, DimProvider)
	fill(&e.Cluster, DimCluster)
	fill(&e.Size, DimSize)
	if e.Tier == "" {
		e.Tier = contract.BillingTier(e.Dimensions[DimTier])
	}
	if e.Tier == "" && e.MeterID == MeterNodeHours {
		e.Tier = contract.TierManaged
	}
	return e
}

// Validate reports what makes the event unfit to send, naming the event.
func (e Event) Validate() error {
	name := e.Idempotency
	switch {
	case e.Idempotency == "":
		return fmt.Errorf("meter event for %q at %s has no idempotency key", e.UserID, e.Hour.Format(time.RFC3339))
	case e.MeterID == "":
		return fmt.Errorf("meter event %s has no meter ID", name)
	case e.UserID == "":
		return fmt.Errorf("meter event %s has no user (org)", name)
	case e.Hour.IsZero() || !e.Hour.Equal(e.Hour.Truncate(time.Hour)):
		return fmt.Errorf("meter event %s: hour %s is not the start of a UTC hour", name, e.Hour.Format(time.RFC3339Nano))
	case math.IsNaN(e.Value) || math.IsInf(e.Value, 0) || e.Value < 0:
		return fmt.Errorf("meter event %s: value %v is not a finite non-negative number", name, e.Value)
	case e.PoolID == "":
		return fmt.Errorf("meter event %s has no poolId", name)
	case !e.Tier.Valid() || e.Tier == "":
		return fmt.Errorf("meter event %s: tier %q is not one of managed, byo", name, e.Tier)
	}
	switch e.MeterID {
	case MeterNodeHours:
		if e.Size == "" {
			return fmt.Errorf("meter event %s: a %s event has no size", name, MeterNodeHours)
		}
	case MeterPoolHours:
		if e.Value > 1 {
			return fmt.Errorf("meter event %s: value %v is more than the one pool-hour an hour holds", name, e.Value)
		}
	default:
		return fmt.Errorf("meter event %s: meterId %q is not %s or %s", name, e.MeterID, MeterNodeHours, MeterPoolHours)
	}
	return nil
}

// CheckEvents fills and checks a batch before a sink stores it, including that no key appears
// twice with different contents (a caller bug that first-write-wins would
// hide). It returns the filled events; the input is not changed.
func CheckEvents(events []Event) ([]Event, error) {
	out := make([]Event, len(events))
	seen := make(map[string]int, len(events))
	for i, e := range events {
		e = e.filled()
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if j, dup := seen[e.Idempotency]; dup && out[j].Value != e.Value {
			return nil, fmt.Errorf("meter event %s appears twice in one batch with values %v and %v", e.Idempotency, out[j].Value, e.Value)
		}
		seen[e.Idempotency] = i
		out[i] = e
	}
	return out, nil
}
