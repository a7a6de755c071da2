package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// PlanInput asks for a scale-up plan.
type PlanInput struct {
	Key      types.PoolKey           `json:"key"`
	Pods     []types.PendingPod      `json:"pods"`
	Existing []types.NodeObservation `json:"existing"`
	// Promised are the pods nodes were bought for that still wait for
	// them: they take booting room first and buy nothing.
	Promised       []types.PendingPod `json:"promised,omitempty"`
	AllowedSizes   []string           `json:"allowedSizes,omitempty"`
	PriceOverrides map[string]float64 `json:"priceOverrides,omitempty"`
	// PriceAdjustments are the policy's (sizing.AdjustPrices), after the
	// overrides.
	PriceAdjustments []types.PriceAdjustment `json:"priceAdjustments,omitempty"`
	// MinNewNodes forces at least this many (the floor, a manual target).
	MinNewNodes int `json:"minNewNodes,omitempty"`
	// MaxNewNodes is the ceiling's headroom.
	MaxNewNodes int `json:"maxNewNodes"`
	// ExcludeSizes ran out of capacity at the provider.
	ExcludeSizes []string `json:"excludeSizes,omitempty"`
	// NodeLabels and NodeTaints are what the pool's policy puts on every
	// node it buys; with Region (the cluster's, "" when unknown) and the
	// pool's identity labels they make the node templates pods are
	// matched against.
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	NodeTaints []types.Taint     `json:"nodeTaints,omitempty"`
	Region     string            `json:"region,omitempty"`
	// DaemonOverhead is what the pool's own per-node pods (DaemonSets)
	// take on every node, as observed: a new node has that much less room.
	DaemonOverhead types.Resources `json:"daemonOverhead,omitempty"`
	// MaxHourlyCost is the pool's cost budget (0: none) and Machines its
	// machines per size now, priced from the catalog to know the spend.
	MaxHourlyCost float64        `json:"maxHourlyCost,omitempty"`
	Machines      map[string]int `json:"machines,omitempty"`
	// OrgBudgetRoom is what the org's cost budget leaves per hour for
	// this plan; negative means the org has no cost budget.
	OrgBudgetRoom float64 `json:"orgBudgetRoom,omitempty"`
	// OrgBudget is set when OrgBudgetRoom applies (zero room is a room).
	OrgBudget bool `json:"orgBudget,omitempty"`
	// FewerNodes asks the planner for sizing.Request.FewerNodes.
	FewerNodes bool `json:"fewerNodes,omitempty"`
	// Objective is sizing.Request.Objective (the policy's sizingObjective).
	Objective string `json:"objective,omitempty"`
	// Expected is sizing.Request.Expected: stand-ins for the demand the
	// pool runs, which choose the size and buy nothing (look-ahead).
	Expected []types.PendingPod `json:"expected,omitempty"`
	// SkipGroups are groups of an older node template (drifted): the
	// plan never grows them, it creates a group of the current template.
	SkipGroups []string `json:"skipGroups,omitempty"`
	// Groups are the pool's groups as the pool read them just before
	// (GroupsKnown): the plan picks its group from them rather than read
	// the provider a second time for the same purchase. Without them it
	// reads.
	Groups      []PlanGroup `json:"groups,omitempty"`
	GroupsKnown bool        `json:"groupsKnown,omitempty"`
	// Offerings say how and where the pool buys (capacity types, zones,
	// spot share, offerings marked sold out); Machines is then keyed by
	// MachineKey.
	Offerings PlanOfferings `json:"offerings,omitzero"`
}

// UnplaceablePod is a pod the plan leaves out, with why. Code is one of
// sizing's Code* constants: only sizing.CodeNoFit means no allowed size can
// ever hold it; sizing.CodeOtherSize pods are for the next decision.
type UnplaceablePod struct {
	Pod    string `json:"pod"`
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason"`
	// Count is how many of a counted entry's pods are left out (0: one pod).
	Count int `json:"count,omitempty"`
}

// PlanResult is the chosen plan and the node group it grows.
type PlanResult struct {
	Size        string           `json:"size"`
	NewNodes    int              `json:"newNodes"`
	HourlyCost  float64          `json:"hourlyCost"`
	Unplaceable []UnplaceablePod `json:"unplaceable,omitempty"`
	// GroupID is the pool's existing group of that size ("" = create one)
	// and GroupTarget its target now, so the workflow can ask for an
	// absolute target that is safe to retry.
	GroupID     string `json:"groupID,omitempty"`
	GroupTarget int    `json:"groupTarget"`
	// Budget says what the pool's cost budget cut from the plan, with the
	// amounts; empty when the plan was within it.
	Budget string `json:"budget,omitempty"`
	// SizeRoom is each allowed size's room for pods, so the pool counts
	// a machine still booting (known only by its size) as room.
	SizeRoom map[string]types.Resources `json:"sizeRoom,omitempty"`
	// SizeZones are the zones each allowed size is sold in, for sizes the
	// catalog sells zone by zone: a replacement buys in its old nodes' zone
	// only where the size is sold there.
	SizeZones map[string][]string `json:"sizeZones,omitempty"`
	// SizePrice is each allowed size's hourly price (after overrides), so
	// the pool can publish what it costs per hour; with offerings also each
	// offering's, by MachineKey.
	SizePrice map[string]float64 `json:"sizePrice,omitempty"`
	// SizeGPUModel is each allowed GPU size's GPU model, so a GPU
	// replacement buys only the old nodes' model (law.Rules.ReplaceGPU).
	SizeGPUModel map[string]string `json:"sizeGPUModel,omitempty"`
	// CapacityType and Zone are the offering the plan buys (empty: on
	// demand, the provider's zone), NodePrice what one node of it costs
	// an hour, and Offering says which and why, for the decision's reason.
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	Zone         string             `json:"zone,omitempty"`
	NodePrice    float64            `json:"nodePrice,omitempty"`
	Offering     string             `json:"offering,omitempty"`
}

// OfferingKey is the offering the plan buys, as types.Offering.Key.
func (r PlanResult) OfferingKey() string {
	return types.Offering{Zone: r.Zone, CapacityType: r.CapacityType}.Key(r.Size)
}

// PlanScaleUp sizes the pods against the provider's catalog.
func (a *Activities) PlanScaleUp(ctx context.Context, in PlanInput) (PlanResult, error) {
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return PlanResult{}, err
	}
	if err := errors.Join(types.ValidateNodeLabels("nodeLabels", in.NodeLabels), types.ValidateTaints("nodeTaints", in.NodeTaints)); err != nil {
		return PlanResult{}, asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), "plan", err))
	}
	catalog, err := c.Provider.Catalog(ctx)
	if err != nil {
		return PlanResult{}, asTemporalError(err)
	}
	if catalog, err = sizing.Restrict(catalog, in.AllowedSizes); err != nil {
		return PlanResult{}, asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), "plan", err))
	}
	if catalog, err = sizing.OverridePrices(catalog, in.PriceOverrides); err != nil {
		return PlanResult{}, asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), "plan", err))
	}
	if catalog, err = sizing.AdjustPrices(catalog, in.PriceAdjustments); err != nil {
		return PlanResult{}, asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), "plan", err))
	}
	if !slices.ContainsFunc(catalog, func(t types.InstanceType) bool { return !slices.Contains(in.ExcludeSizes, t.Name) }) {
		return PlanResult{}, asTemporalError(errclass.New(errclass.InsufficientCapacity, c.Provider.Name(), "plan", fmt.Errorf("no allowed size left (excluded for capacity: %v)", in.ExcludeSizes)))
	}
	if err := checkOfferingPolicy(catalog, in.Offerings); err != nil {
		return PlanResult{}, asTemporalError(errclass.New(errclass.Permanent, c.Provider.Name(), "plan", err))
	}
	catalog = withDaemonOverhead(catalog, in.DaemonOverhead)
	prices := priceBySize(catalog)
	// Offering prices only where a group may be bought other than on
	// demand anywhere: a default pool's state keeps one price per size.
	if in.Offerings.On && (!in.Offerings.rules().Default() || slices.ContainsFunc(sortedKeys(in.Machines), func(k string) bool { return strings.Contains(k, "/") })) {
		offeringPrices(catalog, prices)
	}
	template := sizing.TemplateOptions{Labels: in.NodeLabels, Taints: in.NodeTaints, Region: in.Region, PoolLabels: in.Key.NodeLabels()}
	req := sizing.Request{
		Pending: in.Pods, Existing: withCatalogRoom(in.Existing, catalog), Promised: in.Promised, Catalog: catalog, Template: template, MaxNewNodes: in.MaxNewNodes,
		FewerNodes: in.FewerNodes, Objective: in.Objective, Expected: in.Expected,
	}
	op, err := planOfferings(req, in)
	if err != nil {
		return PlanResult{}, asTemporalError(err)
	}
	plan, req, excluded := op.plan, op.req, op.excluded
	spend := spendOf(in.Machines, prices)
	plan, budgetNote := withinBudgets(plan, req, excluded, in.budgets(spend))
	res := PlanResult{Size: plan.Size, NewNodes: plan.NewNodes, HourlyCost: plan.HourlyCost, Budget: budgetNote,
		SizeRoom: roomBySize(catalog), SizeZones: zonesBySize(catalog), SizePrice: prices, SizeGPUModel: gpuModelBySize(catalog)}
	for _, u := range plan.Unplaceable {
		res.Unplaceable = append(res.Unplaceable, UnplaceablePod{Pod: u.Pod, Code: u.Code, Reason: u.Reason, Count: u.Count})
	}
	if res.NewNodes < in.MinNewNodes && budgetNote == "" {
		if res.Size == "" {
			res.Size = cheapest(req.Catalog, excluded).Name
		}
		floor, note := in.budgets(spend).HoldFloor(in.MinNewNodes, res.Size, priceOf(req.Catalog, res.Size))
		res.NewNodes, res.Budget = max(res.NewNodes, floor), note
	}
	if res.NewNodes == 0 {
		return res, nil
	}
	chosen := op.chosen(res.Size)
	if chosen.CapacityType.Or() != types.CapacityOnDemand || chosen.Zone != "" {
		res.CapacityType, res.Zone = chosen.CapacityType.Or(), chosen.Zone
	}
	res.NodePrice = priceOf(req.Catalog, res.Size)
	res.HourlyCost = float64(res.NewNodes) * res.NodePrice
	if in.Offerings.On {
		res.Offering = op.reason(res.Size)
	}
	groups := in.Groups
	if !in.GroupsKnown {
		read, err := c.Provider.NodeGroups(ctx, in.Key)
		if err != nil {
			return PlanResult{}, asTemporalError(err)
		}
		groups = PlanGroupsOf(viewOf(read, time.Now()))
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].ID < groups[j].ID })
	for _, g := range groups {
		if g.Size == res.Size && g.CapacityType.Or() == res.CapacityType.Or() && g.Zone == res.Zone && !slices.Contains(in.SkipGroups, g.ID) {
			res.GroupID, res.GroupTarget = g.ID, g.Target
			break
		}
	}
	return res, nil
}

// PlanGroup is what a plan needs of a group: what it buys and its target.
type PlanGroup struct {
	ID           string             `json:"id"`
	Size         string             `json:"size"`
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	Zone         string             `json:"zone,omitempty"`
	Target       int                `json:"target"`
}

// PlanGroupsOf are the groups of a provider view, for PlanInput.Groups.
func PlanGroupsOf(v ProviderView) []PlanGroup {
	out := make([]PlanGroup, 0, len(v.Groups))
	for _, g := range v.Groups {
		out = append(out, PlanGroup{ID: g.ID, Size: g.Size, CapacityType: g.CapacityType, Zone: g.Zone, Target: g.Target})
	}
	return out
}

// priceOf is size's hourly price in the catalog (0 if absent).
func priceOf(catalog []types.InstanceType, size string) float64 {
	for _, t := range catalog {
		if t.Name == size {
			return t.HourlyPrice
		}
	}
	return 0
}

// cheapest is the lowest-priced size not excluded, for growth without
// pods to size for (the floor, a manual target).
func cheapest(catalog []types.InstanceType, excluded []string) types.InstanceType {
	var best types.InstanceType
	for _, t := range catalog {
		if slices.Contains(excluded, t.Name) || t.GPUs > 0 {
			continue
		}
		if best.Name == "" || t.HourlyPrice < best.HourlyPrice || (t.HourlyPrice == best.HourlyPrice && t.Name < best.Name) {
			best = t
		}
	}
	if best.Name == "" {
		best = catalog[0]
	}
	return best
}

// ProvisionInput sets an absolute target on a group, or creates it.
type ProvisionInput struct {
	Key types.PoolKey `json:"key"`
	// NodeLabels and NodeTaints, from the pool's policy, go on the nodes
	// of a group this creates, as the templates sizing matched promised.
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	NodeTaints []types.Taint     `json:"nodeTaints,omitempty"`
	Size       string            `json:"size"`
	// CapacityType and Zone are the offering a group this creates buys
	// (empty: on demand, the provider's zone).
	CapacityType   types.CapacityType        `json:"capacityType,omitempty"`
	Zone           string                    `json:"zone,omitempty"`
	GroupID        string                    `json:"groupID,omitempty"`
	Target         int                       `json:"target"`
	IdempotencyKey connectors.IdempotencyKey `json:"idempotencyKey"`
	// GroupSuffix ends the name of a group this creates, so a group of a
	// new node template never takes the name of the drifted one it
	// replaces.
	GroupSuffix string `json:"groupSuffix,omitempty"`
}

// ProvisionResult reports the pool's total target afterwards.
type ProvisionResult struct {
	GroupID     string `json:"groupID"`
	TotalTarget int    `json:"totalTarget"`
	// View is the provider's groups as read after the change.
	View *ProviderView `json:"view,omitempty"`
}

// provisionProgress is Provision's heartbeat: the provider took the
// change, into group GroupID.
type provisionProgress struct {
	Applied bool   `json:"applied,omitempty"`
	GroupID string `json:"groupID,omitempty"`
}

// Provision grows the pool. The target is absolute and creation is keyed,
// so a retry after a lost answer never provisions twice; it heartbeats,
// so a lost worker is retried in seconds.
func (a *Activities) Provision(ctx context.Context, in ProvisionInput) (ProvisionResult, error) {
	if in.Target < 1 || in.Size == "" || in.IdempotencyKey == "" {
		return ProvisionResult{}, asTemporalError(errclass.New(errclass.Permanent, "worker", "provision", fmt.Errorf("bad input: target %d, size %q, key %q", in.Target, in.Size, in.IdempotencyKey)))
	}
	c, err := a.cluster(ctx, in.Key.Cluster)
	if err != nil {
		return ProvisionResult{}, err
	}
	beats := beat[provisionProgress](ctx)
	defer beats.end()
	groupID := in.GroupID
	switch done := beats.get(); {
	case done.Applied:
		// An earlier attempt's worker was lost after the provider took
		// the change: only its answer is left to read.
		groupID = done.GroupID
	case groupID != "":
		err = c.Provider.SetTargetSize(ctx, groupID, in.Target, in.IdempotencyKey)
	default:
		var g connectors.NodeGroup
		g, err = c.Provider.CreateNodeGroup(ctx, connectors.NodeGroupSpec{
			Pool: in.Key, Name: OfferingGroupName(in.Key, in.Size, in.CapacityType, in.Zone) + in.GroupSuffix, Size: in.Size, TargetSize: in.Target,
			Labels: withOffering(withIdentity(in.NodeLabels, in.Key), in.CapacityType, in.Zone), Taints: in.NodeTaints,
			CapacityType: in.CapacityType, Zone: in.Zone,
		}, in.IdempotencyKey)
		groupID = g.ID
	}
	if err != nil {
		return ProvisionResult{}, asTemporalError(err)
	}
	beats.update(func(p *provisionProgress) { p.Applied, p.GroupID = true, groupID })
	activity.GetLogger(ctx).Info("provisioned", "pool", in.Key.WorkflowID(), "group", groupID, "size", in.Size, "target", in.Target, "key", in.IdempotencyKey)
	view, err := readView(ctx, c.Provider, in.Key)
	if err != nil {
		return ProvisionResult{}, asTemporalError(err)
	}
	return ProvisionResult{GroupID: groupID, TotalTarget: view.Target(), View: &view}, nil
}

// withIdentity is the pool's declared node labels plus its identity
// labels, which nothing may override.
func withIdentity(labels map[string]string, key types.PoolKey) map[string]string {
	out := make(map[string]string, len(labels)+4)
	for k, v := range labels {
		out[k] = v
	}
	for k, v := range key.NodeLabels() {
		out[k] = v
	}
	return out
}

// withOffering adds the labels a node bought as an offering carries, as
// the node templates sizing matched promised: the zone label of a pinned
// group and Karpenter's capacity-type label of a spot one. A default group
// (on demand, any zone) gets neither: its nodes match the templates of a
// pool that does not buy by offering.
func withOffering(labels map[string]string, ct types.CapacityType, zone string) map[string]string {
	if ct.Or() != types.CapacityOnDemand {
		labels[types.CapacityTypeLabel] = string(ct)
	}
	if zone != "" {
		labels[corev1.LabelTopologyZone] = zone
	}
	return labels
}

// GroupName is a node group's provider-side name: short, stable, DNS-safe.
func GroupName(key types.PoolKey, size string) string {
	return fmt.Sprintf("visor-%s-%s", key.Service, size)
}

// readView reads the pool's groups after a change, so the workflow learns
// the provider's answer with the change's result.
func readView(ctx context.Context, p connectors.Provider, key types.PoolKey) (ProviderView, error) {
	groups, err := p.NodeGroups(ctx, key)
	if err != nil {
		return ProviderView{}, err
	}
	return viewOf(groups, time.Now()), nil
}
