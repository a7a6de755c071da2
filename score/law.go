package score

import (
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// This file is the only place that builds law.DecisionInput and
// sizing.Request: when either grows a field, adjust it here. It feeds the
// real law the way the pool workflow does (pool_workflow.go decide,
// applyObservation; pool_actions.go grow, scaleDown) and carries out what
// it returns on the simulated cluster.

// Law runs law.Decide with a sizing function: sizing.PlanScaleUp for
// the pool's law, sizing.Baseline for the seed rule.
type Law struct {
	name    string
	pool    types.PoolKey
	policy  types.Policy
	catalog []types.InstanceType
	plan    func(sizing.Request) sizing.Plan
	// rules: the rules it decides and plans with.
	rules Rules

	// The pool's durable state, as PoolState holds it.
	obs         *types.PoolObservation
	lastUp      time.Time
	lastDown    time.Time
	idleSince   map[string]time.Time
	underused   map[string]time.Time
	unplaceable map[string]string
	targetNodes int
	// deferred are pods a plan left out only because it grew another
	// size: the workflow sizes them in the very next decision.
	deferred map[string]bool
	// replacing is the replacement under way; sizeRoom and sizePrice are
	// the catalog's, as the last plan hands them to the workflow.
	replacing    *law.Replacement
	sizeRoom     map[string]types.Resources
	sizePrice    map[string]float64
	sizeGPUModel map[string]string
	lastSample   time.Time
	// lastSignal is the cluster's watch signal at the last sample.
	lastSignal    [3]int
	wakeAt        time.Time
	decisionCount int
	// model is the pool's demand model (Rules.Prewarm, prewarm.go).
	model        *law.DemandModel
	prewarmStats PrewarmStats
}

// NewLaw is the pool's control law with the real planner, as a run
// recorded with every rule decides.
func NewLaw(name string, policy types.Policy, catalog []types.InstanceType) *Law {
	return NewLawWith(name, policy, catalog, AllRules())
}

// Rules are what the scored law decides and plans with: the law's rules
// and the planner's that a pool run reads (workflows' runRules).
type Rules struct {
	law.Rules
	// FewerNodes: the planner buys, among sizes priced at the cheapest
	// plan's rate, the one needing fewest nodes (sizing.Request.FewerNodes).
	FewerNodes bool
	// LookAhead: a scale-up chooses its size for the pods pending and
	// the demand the pool runs (law.RunningMix, sizing.Request.Expected),
	// buying for the pending ones only.
	LookAhead bool
	// FreshScaleDown: a scale-down decided on an observation older than
	// law.FreshScaleDownAge looks again and decides again first (the
	// workflow's act); without it, only one older than two sample
	// intervals does.
	FreshScaleDown bool
}

// AllRules is what a new pool run decides and plans with.
func AllRules() Rules {
	return Rules{Rules: law.AllRules(), FewerNodes: true, LookAhead: true, FreshScaleDown: true}
}

// NewLawWith is the pool's control law with only the given rules, to
// measure what each is worth.
func NewLawWith(name string, policy types.Policy, catalog []types.InstanceType, rules Rules) *Law {
	l := newLaw(name, policy, catalog, sizing.PlanScaleUp)
	l.rules = rules
	return l
}

// NewSeedRule is the HIP seed: the law's defaults (keeping the pool's floor
// and ceiling) with sum-of-requests sizing (sizing.Baseline).
func NewSeedRule(pool types.Policy, catalog []types.InstanceType) *Law {
	p := types.HIPPolicy()
	p.MinNodes, p.MaxNodes, p.AllowedSizes = pool.MinNodes, pool.MaxNodes, pool.AllowedSizes
	return newLaw("seed rule", p, catalog, sizing.Baseline)
}

func newLaw(name string, policy types.Policy, catalog []types.InstanceType, plan func(sizing.Request) sizing.Plan) *Law {
	return &Law{
		name: name, policy: policy, catalog: catalog, plan: plan,
		pool:      types.PoolKey{Org: "score", Project: "score", Service: "score", Provider: "sim", Cluster: "score"},
		idleSince: map[string]time.Time{}, underused: map[string]time.Time{}, unplaceable: map[string]string{}, deferred: map[string]bool{},
	}
}

func (l *Law) Name() string { return l.name }

// Decisions counts calls of law.Decide.
func (l *Law) Decisions() int { return l.decisionCount }

// Step samples the cluster every SampleInterval and decides when a sample
// arrives or when the last decision's WakeAt is due.
func (l *Law) Step(c *Cluster) error {
	now := c.Now()
	fresh := l.obs == nil || !now.Before(l.lastSample.Add(l.policy.SampleInterval.D()))
	if sig, watched := c.WatchSignal(); watched && sig != l.lastSignal {
		fresh = true
	}
	if fresh {
		l.lastSignal, _ = c.WatchSignal()
		obs := c.Observe(l.pool)
		l.applyObservation(obs)
		l.lastSample = now
	}
	due := !l.wakeAt.IsZero() && !now.Before(l.wakeAt)
	if !fresh && !due {
		return nil
	}
	d := l.decide(now)
	stale := 2 * l.policy.SampleInterval.D()
	if l.rules.FreshScaleDown {
		stale = law.FreshScaleDownAge
	}
	if d.Action == law.ActionScaleDown && now.Sub(l.obs.ObservedAt) > stale {
		// As the workflow's act: destructive steps act on fresh data.
		l.lastSignal, _ = c.WatchSignal()
		l.applyObservation(c.Observe(l.pool))
		l.lastSample = now
		d = l.decide(now)
	}
	var err error
	switch d.Action {
	case law.ActionScaleUp:
		err = l.grow(c, d)
		l.prewarmed(now, d)
	case law.ActionScaleDown:
		err = l.shrink(c, d)
	case law.ActionReplace:
		err = l.replace(c, d)
	}
	if d.Action != law.ActionNone {
		// As the workflow does: decide again for the next wake-up, but do
		// not act on it until something wakes the pool.
		d = l.decide(now)
	}
	l.wakeAt = d.WakeAt
	return err
}

func (l *Law) decide(now time.Time) law.Decision {
	l.decisionCount++
	in := law.DecisionInput{
		Policy:         l.policy,
		Observation:    l.obs,
		Now:            now,
		LastScaleUp:    l.lastUp,
		LastScaleDown:  l.lastDown,
		IdleSince:      l.idleSince,
		Unplaceable:    l.unplaceable,
		Deferred:       l.deferred,
		InFlightNodes:  max(0, l.targetNodes-l.observedNodes()),
		Gate:           law.OpenGate(),
		UnderusedSince: l.underused,
		Rules:          l.rules.Rules,
		Replacing:      l.replacing,
		SizeRoom:       l.sizeRoom,
		SizePrice:      l.sizePrice,
		SizeGPUModel:   l.sizeGPUModel,
	}
	l.withPrewarm(&in)
	return law.Decide(in)
}

func (l *Law) applyObservation(obs types.PoolObservation) {
	l.obs = &obs
	l.observeDemand(obs)
	l.idleSince = law.UpdateIdleSince(l.policy, l.idleSince, obs)
	l.underused = law.UpdateUnderusedSince(l.policy, l.underused, obs)
	present := make(map[string]bool, len(obs.PendingPods))
	for _, p := range obs.PendingPods {
		present[p.Key()] = true
	}
	for k := range l.unplaceable {
		if !present[k] {
			delete(l.unplaceable, k)
		}
	}
	for k := range l.deferred {
		if !present[k] {
			delete(l.deferred, k)
		}
	}
	l.targetNodes = max(l.targetNodes, l.observedNodes())
	if l.replacing != nil && !law.ReplacementLive(l.policy, l.replacing, l.obs, obs.ObservedAt) {
		l.replacing = nil
	}
}

func (l *Law) observedNodes() int { return law.CountNodes(l.obs, 0) }

// grow plans as activities.PlanScaleUp does: booting nodes count as room,
// the floor buys the cheapest size without GPUs.
func (l *Law) grow(c *Cluster, d law.Decision) error {
	var booting []types.NodeObservation
	for _, n := range l.obs.Nodes {
		if n.State == types.NodeProvisioning || n.State == types.NodeNotReady {
			booting = append(booting, n)
		}
	}
	req := sizing.Request{Pending: d.Pods, Existing: booting, Catalog: l.catalog, MaxNewNodes: d.MaxNewNodes, FewerNodes: l.rules.FewerNodes, Objective: l.policy.SizingObjective}
	if l.rules.LookAhead {
		req.Expected = law.RunningMix(l.obs)
	}
	plan := l.plan(req)
	// As the workflow parks them: only pods no size can hold wait for a
	// change; one that missed this plan's size is sized next.
	for _, u := range plan.Unplaceable {
		switch u.Code {
		case sizing.CodeNoFit, sizing.CodeInvalidRequest:
			l.unplaceable[u.Pod] = u.Reason
		case sizing.CodeOtherSize:
			l.deferred[u.Pod] = true
		}
	}
	for _, pod := range d.Pods {
		if !l.deferred[pod.Key()] || plan.NewNodes == 0 {
			continue
		}
		placed := true
		for _, u := range plan.Unplaceable {
			if u.Pod == pod.Key() {
				placed = false
			}
		}
		if placed {
			delete(l.deferred, pod.Key())
		}
	}
	size, n := plan.Size, plan.NewNodes
	if n < d.MinNewNodes {
		if size == "" {
			size = cheapestCPU(l.catalog).Name
		}
		n = d.MinNewNodes
	}
	if d.MaxNewNodes >= 0 {
		n = min(n, d.MaxNewNodes)
	}
	if n <= 0 {
		return nil
	}
	added, err := c.AddNodes(size, n)
	if err != nil || added == 0 {
		return err
	}
	l.lastUp = c.Now()
	l.targetNodes = max(l.targetNodes, l.observedNodes()) + added
	l.sizeRoom, l.sizePrice = roomAndPrice(l.catalog)
	l.sizeGPUModel = gpuModels(l.catalog)
	return nil
}

// replace buys a replacement's one new node, as the workflow's replace
// does; a later decision drains the old nodes once it is Ready.
func (l *Law) replace(c *Cluster, d law.Decision) error {
	added, err := c.AddNodes(d.Replacing.Size, 1)
	if err != nil || added == 0 {
		return err
	}
	l.replacing = d.Replacing
	l.targetNodes = max(l.targetNodes, l.observedNodes()) + added
	return nil
}

// roomAndPrice is each size's room for pods and hourly price, as the
// plan activity reports them (activities/booting.go).
func roomAndPrice(catalog []types.InstanceType) (map[string]types.Resources, map[string]float64) {
	room, price := make(map[string]types.Resources, len(catalog)), make(map[string]float64, len(catalog))
	for _, t := range catalog {
		room[t.Name], price[t.Name] = t.Allocatable(), t.HourlyPrice
	}
	return room, price
}

// gpuModels is each GPU size's model, as the plan activity reports it.
func gpuModels(catalog []types.InstanceType) map[string]string {
	out := map[string]string{}
	for _, t := range catalog {
		if t.GPUs > 0 && t.GPUModel != "" {
			out[t.Name] = t.GPUModel
		}
	}
	return out
}

// shrink drains and deletes the chosen nodes and forgets them.
func (l *Law) shrink(c *Cluster, d law.Decision) error {
	if err := c.RemoveNodes(d.RemoveNodes); err != nil {
		return err
	}
	if l.replacing != nil && slices.Equal(l.replacing.Old, d.RemoveNodes) {
		c.stats.replacements++
	}
	gone := make(map[string]bool, len(d.RemoveNodes))
	for _, name := range d.RemoveNodes {
		gone[name] = true
		delete(l.idleSince, name)
		delete(l.underused, name)
	}
	kept := make([]types.NodeObservation, 0, len(l.obs.Nodes))
	for _, n := range l.obs.Nodes {
		if !gone[n.Name] {
			kept = append(kept, n)
		}
	}
	cp := *l.obs
	cp.Nodes = kept
	l.obs = &cp
	l.targetNodes = max(0, l.targetNodes-len(d.RemoveNodes))
	l.lastDown = c.Now()
	if l.replacing != nil && slices.ContainsFunc(d.RemoveNodes, func(n string) bool { return slices.Contains(l.replacing.Old, n) }) {
		l.replacing = nil
	}
	return nil
}

// planFresh is the planner on new nodes only, for the offline packings,
// with the sizing objective (types.SizingCost or types.SizingNodes).
func planFresh(pending []types.PendingPod, catalog []types.InstanceType, objective string) sizing.Plan {
	return sizing.PlanScaleUp(sizing.Request{Pending: pending, Catalog: catalog, Objective: objective})
}
