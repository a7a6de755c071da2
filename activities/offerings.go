package activities

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// PlanOfferings is what a pool tells the planner about buying by
// offering; the zero value plans on demand in any zone, as a pool without
// the offerings change does.
type PlanOfferings struct {
	// On: the pool runs with offerings (workflows' offerings change);
	// without it the fields below are ignored.
	On            bool                 `json:"on,omitempty"`
	CapacityTypes []types.CapacityType `json:"capacityTypes,omitempty"`
	Zones         []string             `json:"zones,omitempty"`
	MaxSpotShare  float64              `json:"maxSpotShare,omitempty"`
	// Unavailable are offerings (types.Offering.Key) marked sold out, each
	// until when.
	Unavailable map[string]time.Time `json:"unavailable,omitempty"`
}

func (o PlanOfferings) rules() sizing.OfferingRules {
	if !o.On {
		return sizing.OfferingRules{}
	}
	return sizing.OfferingRules{CapacityTypes: o.CapacityTypes, Zones: o.Zones, Unavailable: o.Unavailable}
}

// OfferingGroupName is GroupName for a group bought as offering o: the
// default group keeps its name, others say capacity type and zone.
func OfferingGroupName(key types.PoolKey, size string, ct types.CapacityType, zone string) string {
	name := GroupName(key, size)
	if ct.Or() == types.CapacitySpot {
		name += "-spot"
	}
	if zone != "" {
		name += "-" + zone
	}
	return name
}

// checkOfferingPolicy refuses zones and capacity types no allowed size is
// sold in: a policy that can never buy is a mistake to report, not a
// shortage to wait out.
func checkOfferingPolicy(catalog []types.InstanceType, o PlanOfferings) error {
	if !o.On {
		return nil
	}
	var errs []string
	offeredZones := map[string]bool{}
	for _, t := range catalog {
		for _, of := range t.OfferingsOrDefault() {
			if slices.Contains(o.effectiveTypes(), of.CapacityType.Or()) && of.Zone != "" {
				offeredZones[of.Zone] = true
			}
		}
	}
	for i, z := range o.Zones {
		if !offeredZones[z] {
			errs = append(errs, fmt.Sprintf("policy.zones[%d]: zone %q is not offered by any allowed size (offered: %s)", i, z, strings.Join(sortedSet(offeredZones), ", ")))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func (o PlanOfferings) effectiveTypes() []types.CapacityType {
	if len(o.CapacityTypes) == 0 {
		return []types.CapacityType{types.CapacityOnDemand}
	}
	return o.CapacityTypes
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	if len(out) == 0 {
		out = []string{"none"}
	}
	return out
}

// offeringPlan is a plan with the offering it buys.
type offeringPlan struct {
	plan     sizing.Plan
	req      sizing.Request
	excluded []string
	offered  map[string]sizing.Offered
	// noOffering are sizes without a usable offering, with why.
	noOffering map[string]string
	rules      sizing.OfferingRules
}

// planOfferings prices every size by its offering and plans; then, for a
// size bought zone by zone, buys in the cheapest zone whose node template
// still holds what the plan placed, and keeps spot within the pool's share.
func planOfferings(req sizing.Request, in PlanInput) (offeringPlan, error) {
	op := offeringPlan{rules: in.Offerings.rules()}
	for {
		raw := req.Catalog
		priced, offered, noOffering := sizing.PriceByOffering(raw, op.rules)
		op.offered, op.noOffering = offered, noOffering
		op.excluded = slices.Clone(in.ExcludeSizes)
		for _, t := range raw {
			if _, ok := noOffering[t.Name]; ok && !slices.Contains(op.excluded, t.Name) {
				op.excluded = append(op.excluded, t.Name)
			}
		}
		if len(offered) == 0 || !slices.ContainsFunc(priced, func(t types.InstanceType) bool { return !slices.Contains(op.excluded, t.Name) }) {
			return op, noSizeLeft(noOffering, in.ExcludeSizes)
		}
		op.req = req
		op.req.Catalog = priced
		op.plan = sizing.PlanScaleUpExcluding(op.req, op.excluded)
		op.pinZone()
		if why := op.spotOverShare(in); why != "" && op.rules.NoSpot == "" {
			op.rules.NoSpot = why
			continue
		}
		return op, nil
	}
}

// noSizeLeft is the error when no allowed size can be bought: a shortage
// (InsufficientCapacity) when something was sold out, else the policy's
// mistake (Permanent).
func noSizeLeft(noOffering map[string]string, excluded []string) error {
	var why []string
	soldOut := len(excluded) > 0
	for _, size := range sortedKeys(noOffering) {
		why = append(why, noOffering[size])
		soldOut = soldOut || strings.Contains(noOffering[size], "sold out")
	}
	if len(excluded) > 0 {
		why = append(why, fmt.Sprintf("excluded for capacity: %v", excluded))
	}
	err := fmt.Errorf("no allowed size left: %s", strings.Join(why, "; "))
	if soldOut {
		return errclass.New(errclass.InsufficientCapacity, "planner", "plan", err)
	}
	return errclass.New(errclass.Permanent, "planner", "plan", fmt.Errorf("policy.capacityTypes/zones: %w", err))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pinZone: a size offered zone by zone is bought in one zone per
// decision, the cheapest whose template holds as many of the plan's pods.
func (op *offeringPlan) pinZone() {
	if op.plan.NewNodes == 0 {
		return
	}
	cands := op.offered[op.plan.Size].Candidates
	onePrice := len(cands) == 1 && cands[0].Zone == ""
	if onePrice {
		cands = op.zonesForPinnedPods(cands[0])
	}
	if len(cands) < 2 {
		return
	}
	left := unplaced(op.plan)
	// Zone-priced candidates: the cheapest that holds as many. One-price
	// zones (pods pinned to zones): the first that holds as many, and only
	// if some zone holds fewer, else the pods' rules single no zone out (a
	// spread over zones, which the provider's balancing serves better).
	var pick *types.Offering
	var pickReq sizing.Request
	var pickPlan sizing.Plan
	zoneMatters := false
	for _, c := range cands {
		req := op.req
		req.Catalog = sizing.WithZone(op.req.Catalog, op.plan.Size, c)
		p := sizing.PlanScaleUpExcluding(req, op.excluded)
		if p.Size != op.plan.Size || unplaced(p) > left {
			zoneMatters = true
			continue
		}
		if pick == nil {
			c := c
			pick, pickReq, pickPlan = &c, req, p
			if !onePrice {
				break
			}
		}
	}
	if pick == nil || onePrice && !zoneMatters {
		return
	}
	op.plan, op.req = pickPlan, pickReq
	o := op.offered[pickPlan.Size]
	o.Candidates = []types.Offering{*pick}
	op.offered[pickPlan.Size] = o
}

// zonesForPinnedPods: a size every zone sells at one price is bought
// without a zone, the provider placing it, unless a pod of the plan is
// pinned to zones (a zone nodeSelector, a required node affinity on the
// zone, a zone spread it must not break): the plan placed such a pod on
// one zone's template, and a machine the provider put elsewhere would not
// admit it. Then each of the size's zones is a candidate at that price,
// by name, and pinZone buys in the first whose template holds as many of
// the plan's pods (none, for pods that need several zones: then the
// provider places them, spreading, as it places any zone-less group).
func (op *offeringPlan) zonesForPinnedPods(every types.Offering) []types.Offering {
	if !slices.ContainsFunc(op.req.Pending, func(p types.PendingPod) bool { return pinnedToZones(p.Scheduling) }) {
		return nil
	}
	var zones []string
	for _, t := range op.req.Catalog {
		if t.Name == op.plan.Size {
			zones = slices.Clone(t.Zones)
		}
	}
	slices.Sort(zones)
	out := make([]types.Offering, 0, len(zones))
	for _, z := range zones {
		o := every
		o.Zone = z
		out = append(out, o)
	}
	return out
}

// pinnedToZones says whether the pod's placement depends on the node's
// zone.
func pinnedToZones(s *types.PodScheduling) bool {
	if s == nil {
		return false
	}
	isZone := func(k string) bool { return k == corev1.LabelTopologyZone || k == corev1.LabelFailureDomainBetaZone }
	for k := range s.NodeSelector {
		if isZone(k) {
			return true
		}
	}
	if s.NodeAffinity != nil {
		for _, term := range s.NodeAffinity.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if isZone(e.Key) {
					return true
				}
			}
		}
	}
	return slices.ContainsFunc(s.TopologySpread, func(c corev1.TopologySpreadConstraint) bool { return isZone(c.TopologyKey) })
}

func unplaced(p sizing.Plan) int {
	n := 0
	for _, u := range p.Unplaceable {
		n += max(u.Count, 1)
	}
	return n
}

// spotOverShare says why the plan's spot nodes would take the pool past
// its maxSpotShare ("" when they would not, or the plan buys no spot).
func (op *offeringPlan) spotOverShare(in PlanInput) string {
	share := in.Offerings.MaxSpotShare
	if share <= 0 || op.plan.NewNodes == 0 || op.chosen(op.plan.Size).CapacityType != types.CapacitySpot {
		return ""
	}
	spot, total := 0, 0
	for k, n := range in.Machines {
		total += n
		if strings.HasSuffix(k, "/"+string(types.CapacitySpot)) {
			spot += n
		}
	}
	after := total + op.plan.NewNodes
	allowed := int(math.Floor(share*float64(after) + 1e-9))
	if spot+op.plan.NewNodes <= allowed {
		return ""
	}
	return fmt.Sprintf("maxSpotShare %.0f%%: %d of %d nodes would be spot", share*100, spot+op.plan.NewNodes, after)
}

// chosen is the offering size is bought as.
func (op *offeringPlan) chosen(size string) types.Offering {
	if c := op.offered[size].Candidates; len(c) > 0 {
		return c[0]
	}
	return types.Offering{CapacityType: types.CapacityOnDemand}
}

// reason says which offering the plan buys and why.
func (op *offeringPlan) reason(size string) string {
	o := op.offered[size]
	notes := slices.Clone(o.Notes)
	if op.rules.NoSpot != "" {
		notes = append(notes, "no spot: "+op.rules.NoSpot)
	}
	why := "cheapest allowed offering"
	if len(notes) > 0 {
		why = "cheapest available offering"
	}
	return sizing.DescribeOffering(size, op.chosen(size), append([]string{why}, notes...))
}

// offeringPrices are the hourly prices of every offering of the catalog
// by MachineKey, so a pool prices a spot group at what spot costs.
func offeringPrices(catalog []types.InstanceType, out map[string]float64) {
	for _, t := range catalog {
		for _, o := range t.Offerings {
			out[types.MachineKey(t.Name, o.CapacityType, o.Zone)] = o.HourlyPrice
			anyZone := types.MachineKey(t.Name, o.CapacityType, "")
			if p, ok := out[anyZone]; !ok || (o.CapacityType.Or() != types.CapacityOnDemand && o.HourlyPrice < p) {
				out[anyZone] = o.HourlyPrice
			}
		}
	}
}
