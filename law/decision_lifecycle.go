package law

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Node lifecycle (Rules.Lifecycle), as Karpenter's drift and expiration:
// a node launched under a node template the policy no longer has, or of
// a size, capacity type or zone it no longer allows, is drifted; a node
// older than the policy's expireAfter is expired. Either is disrupted
// the way replacement consolidation works: drained at once when the other
// nodes hold its pods and the floor allows, else a new node is bought
// first and the old one drained once that is Ready and holds its pods.
// Never more nodes draining than the disruption budget allows, never a
// node whose pods may not be evicted, until terminationGracePeriod after
// it was first due: then it is drained as far as it goes and deleted.

// ActionDisrupt drains drifted or expired nodes (RemoveNodes; those in
// Forced whatever blocks their drain), or, with Replacing set, buys the
// node that replaces one first.
const ActionDisrupt Action = "disrupt"

// Lifecycle is what the law needs to judge drift and expiry (nil: the
// rule is off, as in runs recorded before it).
type Lifecycle struct {
	// Template is the policy's node template hash (Policy.TemplateHash).
	Template string
	// Groups are the pool's node groups by ID: the template hash each was
	// created under and the offering it buys.
	Groups map[string]GroupTemplate
	// DueSince is when each node was first found drifted or expired
	// (UpdateDueSince): terminationGracePeriod counts from it.
	DueSince map[string]time.Time
}

// GroupTemplate is one node group as drift judges it.
type GroupTemplate struct {
	Template     string             `json:"template"`
	CapacityType types.CapacityType `json:"capacityType,omitempty"`
	Zone         string             `json:"zone,omitempty"`
}

// Due is a drifted or expired node, with why.
type Due struct {
	Node    string `json:"node"`
	Drifted bool   `json:"drifted,omitempty"`
	Expired bool   `json:"expired,omitempty"`
	Reason  string `json:"reason"`
}

// DueNodes lists the pool's nodes that are drifted or expired at now,
// expired ones first (oldest first), then drifted ones by name. Nodes
// being deleted are left out; a node of no known group drifts only on
// its size.
func DueNodes(p types.Policy, lc *Lifecycle, obs *types.PoolObservation, machines []Machine, now time.Time) []Due {
	if lc == nil || obs == nil {
		return nil
	}
	group := make(map[string]string, len(machines))
	for _, m := range machines {
		group[m.Name] = m.GroupID
	}
	created := map[string]time.Time{}
	var out []Due
	for _, n := range obs.Nodes {
		if n.State == types.NodeDeleting || n.State == types.NodeProvisioning {
			continue
		}
		var why []string
		due := Due{Node: n.Name}
		if g, ok := lc.Groups[group[n.Name]]; ok {
			if g.Template != "" && g.Template != lc.Template {
				why = append(why, "its group was created under another node template (labels, taints)")
			}
			if !p.CapacityTypeAllowed(g.CapacityType) {
				why = append(why, fmt.Sprintf("capacity type %s is no longer allowed", g.CapacityType.Or()))
			}
			if !p.ZoneAllowed(g.Zone) {
				why = append(why, fmt.Sprintf("zone %s is no longer allowed", g.Zone))
			}
		}
		if n.Size != "" && !p.SizeAllowed(n.Size) {
			why = append(why, fmt.Sprintf("size %s is no longer allowed", n.Size))
		}
		if len(why) > 0 {
			due.Drifted = true
			due.Reason = "drifted: " + strings.Join(why, ", ")
		}
		if exp := p.ExpireAfter.D(); exp > 0 && !n.CreatedAt.IsZero() && !now.Before(n.CreatedAt.Add(exp)) {
			due.Expired = true
			expiry := fmt.Sprintf("expired: created %s, older than expireAfter %s", n.CreatedAt.UTC().Format(time.RFC3339), exp)
			due.Reason = strings.TrimPrefix(due.Reason+"; "+expiry, "; ")
		}
		if due.Drifted || due.Expired {
			created[n.Name] = n.CreatedAt
			out = append(out, due)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Expired != b.Expired {
			return a.Expired
		}
		if a.Expired && !created[a.Node].Equal(created[b.Node]) {
			return created[a.Node].Before(created[b.Node])
		}
		return a.Node < b.Node
	})
	return out
}

// UpdateDueSince keeps, for each node due now, when it was first found
// due; a node no longer due (or gone) loses its clock.
func UpdateDueSince(prev map[string]time.Time, due []Due, now time.Time) map[string]time.Time {
	next := make(map[string]time.Time, len(due))
	for _, d := range due {
		if since, ok := prev[d.Node]; ok {
			next[d.Node] = since
		} else {
			next[d.Node] = now
		}
	}
	return next
}

// NextExpiry is the earliest moment a node not yet expired expires (zero:
// none will, or expiry is off).
func NextExpiry(p types.Policy, obs *types.PoolObservation, now time.Time) time.Time {
	exp := p.ExpireAfter.D()
	if exp <= 0 || obs == nil {
		return time.Time{}
	}
	var next time.Time
	for _, n := range obs.Nodes {
		if n.State == types.NodeDeleting || n.CreatedAt.IsZero() {
			continue
		}
		if at := n.CreatedAt.Add(exp); at.After(now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// pastGrace reports whether node's drain may no longer be held: it has
// been due longer than terminationGracePeriod.
func pastGrace(in DecisionInput, node string) bool {
	tgp := in.Policy.TerminationGracePeriod.D()
	since, ok := in.Lifecycle.DueSince[node]
	return tgp > 0 && ok && !in.Now.Before(since.Add(tgp))
}

// lifecycle decides drift and expiry at the scale-down step (fresh data,
// no pending pods, scale-down allowed by the gate and the disruption
// windows). It reports whether it set the decision; a lifecycle
// replacement waiting for its new node holds the other scale-down rules
// back too, so they do not drain the nodes it counts on.
func lifecycle(in DecisionInput, p types.Policy, current int, d *Decision, wake func(time.Time, string)) bool {
	lc := in.Lifecycle
	if lc == nil {
		return false
	}
	obs := in.Observation
	wake(NextExpiry(in.Policy, obs, in.Now), "node expires")
	if r := in.Replacing; r != nil && r.Lifecycle != "" && ReplacementLive(in.Policy, r, obs, in.Now) {
		return lifecycleDrain(in, p, current, d, wake)
	}
	if ReplacementLive(in.Policy, in.Replacing, obs, in.Now) {
		return false // consolidation's replacement goes first
	}
	due := DueNodes(in.Policy, lc, obs, in.Machines, in.Now)
	if len(due) == 0 {
		return false
	}
	if !obs.ObservedAt.After(in.LastScaleDown) {
		// Where the last drain's pods went is not seen yet: the room the
		// held observation shows may be theirs.
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s drifted or expired; waiting for an observation after the last drain", Plural(len(due), "node")))
		return false
	}
	reason := map[string]string{}
	var ready []string
	tgp := in.Policy.TerminationGracePeriod.D()
	for _, c := range due {
		n, _ := nodeNamed(obs, c.Node)
		forced := pastGrace(in, c.Node)
		if !forced && tgp > 0 {
			if since, ok := lc.DueSince[c.Node]; ok {
				wake(since.Add(tgp), "terminationGracePeriod "+c.Node)
			}
		}
		switch {
		case n.State != types.NodeReady:
			continue // cordoned or NotReady: a drain or the repair rule has it
		case len(n.DrainBlockers) > 0 && !forced:
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s is %s but cannot be emptied: %s", c.Node, kind(c), strings.Join(n.DrainBlockers, "; ")))
			continue
		}
		if why := untolerated(in, n); why != "" {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s is %s but kept: %s", c.Node, kind(c), why))
			continue
		}
		if until, blocked := in.DrainBlocked[c.Node]; blocked && in.Now.Before(until) && !forced {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s is %s; its drain failed, retried at %s", c.Node, kind(c), until.UTC().Format(time.RFC3339)))
			wake(until, "retry drain of "+c.Node)
			continue
		}
		reason[c.Node] = c.Reason
		ready = append(ready, c.Node)
	}
	if len(ready) == 0 {
		return false
	}
	slots := DrainSlots(in.Policy, current, draining(in))
	if slots <= 0 {
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s drifted or expired; the disruption budget allows no more nodes draining at once", Plural(len(ready), "node")))
		return false
	}
	// Drain at once the nodes whose pods the others hold, above the floor.
	var scratch Decision
	remove := fitsElsewhere(obs, ready, min(slots, max(current-p.MinNodes, 0)), &scratch)
	if in.KeepsHeadroom != nil && len(remove) > 0 {
		remove = keepHeadroom(remove, in.KeepsHeadroom, &scratch)
	}
	if len(remove) > 0 {
		d.Action = ActionDisrupt
		d.RemoveNodes = remove
		var why []string
		for _, name := range remove {
			if pastGrace(in, name) {
				d.Forced = append(d.Forced, name)
			}
			why = append(why, name+" "+reason[name])
		}
		d.Reason = fmt.Sprintf("lifecycle: %s drained, the other nodes hold their pods: %s", Plural(len(remove), "node"), strings.Join(why, "; "))
		return true
	}
	// Else buy first: one new node for the first one due, and with a
	// drain budget one each for as many more due nodes of the same
	// replacement size as its slots and the ceiling allow.
	name := ready[0]
	n, _ := nodeNamed(obs, name)
	switch {
	case current >= p.MaxNodes:
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s %s: its replacement would pass the ceiling of %d nodes", name, reason[name], p.MaxNodes))
		return false
	case in.InFlightNodes > 0 || anyProvisioning(obs):
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s %s: its replacement waits for the machines still booting", name, reason[name]))
		return false
	}
	size, ok := replacementSize(in, n)
	if !ok {
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s %s: no allowed size is known to hold its pods (%s)", name, reason[name], n.Requested))
		return false
	}
	batch := []string{name}
	if hasDrainBudget(in.Policy) {
		limit := min(slots, p.MaxNodes-current)
		if p.MaxScaleDownPerDecision > 0 {
			limit = min(limit, p.MaxScaleDownPerDecision)
		}
		for _, other := range ready[1:] {
			if len(batch) >= limit {
				break
			}
			if on, _ := nodeNamed(obs, other); on.Size == n.Size {
				if s, ok := replacementSize(in, on); ok && s == size {
					batch = append(batch, other)
				}
			}
		}
	}
	why := reason[name]
	if len(batch) > 1 {
		var all []string
		for _, b := range batch {
			all = append(all, b+" "+reason[b])
		}
		why = strings.Join(all, "; ")
	}
	d.Action = ActionDisrupt
	d.Replacing = &Replacement{Old: batch, Size: size, Since: in.Now, Lifecycle: why}
	if len(batch) == 1 {
		d.Reason = fmt.Sprintf("lifecycle: %s %s; one %s bought first, %s drained once it is Ready and holds its pods", name, why, size, name)
	} else {
		d.Reason = fmt.Sprintf("lifecycle: %s; %d × %s bought first, the %s drained once they are Ready and hold their pods", why, len(batch), size, Plural(len(batch), "node"))
	}
	return true
}

// hasDrainBudget reports whether the policy bounds the nodes draining at
// once: only then are several drifted or expired nodes renewed together.
func hasDrainBudget(p types.Policy) bool {
	return p.Disruption != nil && (p.Disruption.MaxDrainingNodes > 0 || p.Disruption.MaxDrainingPercent > 0)
}

// lifecycleDrain is a lifecycle replacement's second half: drain the old
// nodes once as many new ones are Ready and the old nodes' pods fit their
// free room (each old node's on one new node), within the floor and the
// disruption budget. Unlike consolidation's, the new nodes may be of a new
// template: being of it is the point.
func lifecycleDrain(in DecisionInput, p types.Policy, current int, d *Decision, wake func(time.Time, string)) bool {
	r := in.Replacing
	obs := in.Observation
	names := strings.Join(r.Old, ", ")
	news := renewedNodes(obs, r)
	if len(news) < len(r.Old) {
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s %s: waiting for %s of %s to be Ready", names, r.Lifecycle, Plural(len(r.Old), "new node"), r.Size))
		return true
	}
	news = news[:len(r.Old)]
	var forced []string
	room := make([]types.Resources, len(news))
	for i, nn := range news {
		room[i] = nn.FreeRoom()
	}
	for _, old := range r.Old {
		n, _ := nodeNamed(obs, old)
		past := pastGrace(in, old)
		if past {
			forced = append(forced, old)
		}
		if why := untolerated(in, n); why != "" {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not drained: %s", old, why))
			return true
		}
		if until, blocked := in.DrainBlocked[old]; in.Rules.LifecycleRetry && blocked && in.Now.Before(until) && !past {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: its drain failed, retried at %s", old, until.UTC().Format(time.RFC3339)))
			wake(until, "retry drain of "+old)
			return true
		}
		if n.State != types.NodeReady || (len(n.DrainBlockers) > 0 && !past) {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: not drained, it is no longer Ready or evictable", old))
			return true
		}
		placed := false
		for i, nn := range news {
			load := n.Requested
			if nn.Allocatable.Pods == 0 {
				load.Pods = 0
			}
			if load.Fits(room[i]) {
				room[i] = room[i].Sub(load)
				placed = true
				break
			}
		}
		if !placed && !past {
			d.Skipped = append(d.Skipped, fmt.Sprintf("%s: its pods (%s) do not fit the free room of its new nodes", old, n.Requested))
			return true
		}
	}
	if current-len(r.Old) < p.MinNodes || DrainSlots(in.Policy, current, draining(in)) < len(r.Old) {
		d.Blocked = append(d.Blocked, fmt.Sprintf("%s %s: the floor or the disruption budget does not allow draining now", names, r.Lifecycle))
		return true
	}
	d.Action = ActionDisrupt
	d.RemoveNodes = append([]string(nil), r.Old...)
	d.Forced = forced
	var newNames []string
	for _, nn := range news {
		newNames = append(newNames, nn.Name)
	}
	if len(r.Old) == 1 {
		d.Reason = fmt.Sprintf("lifecycle: %s %s; drained now that %s (%s) is Ready and holds its pods", names, r.Lifecycle, newNames[0], r.Size)
	} else {
		d.Reason = fmt.Sprintf("lifecycle: %s; drained now that %s (%s) are Ready and hold their pods", r.Lifecycle, strings.Join(newNames, ", "), r.Size)
	}
	return true
}

// untolerated says which of node n's evictable pods would not tolerate a
// taint of the current node template, which every node bought now
// carries (the policy's NoSchedule and NoExecute nodeTaints): drained,
// they would wait for a node that admits them, and none is bought. ""
// when they all would, or the observer does not say. Past
// terminationGracePeriod too: that bounds a blocked drain, and this node's
// drain is not blocked, its pods have nowhere to go.
func untolerated(in DecisionInput, n types.NodeObservation) string {
	if !in.Rules.RenewalTolerations {
		return ""
	}
	return Untolerated(in.Policy, n)
}

// Untolerated is untolerated's judgement whatever the rules: which of n's
// evictable pods would not tolerate a taint of p's node template.
func Untolerated(p types.Policy, n types.NodeObservation) string {
	if len(p.NodeTaints) == 0 {
		return ""
	}
	var names []string
	var taints []string
	count := 0
	for _, s := range n.PodTolerations {
		t, bad := s.Untolerated(p.NodeTaints)
		if !bad {
			continue
		}
		count += s.Count
		name := s.Pod
		if name == "" {
			name = "pods of toleration sets not listed"
		}
		if len(names) < maxNamedPods {
			names = append(names, name)
		}
		if !slices.Contains(taints, t.String()) {
			taints = append(taints, t.String())
		}
	}
	if count == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s) do not tolerate taint %s of the current node template", Plural(count, "pod"), strings.Join(names, ", "), strings.Join(taints, ", "))
}

// maxNamedPods bounds the pods a reason names.
const maxNamedPods = 3

// createdSkew is how much earlier than the decision to buy it a new node
// may say it was created: Kubernetes keeps creation times to the second,
// and the provider's clock is not the workflow's.
const createdSkew = 5 * time.Second

// renewedNodes are the Ready nodes a lifecycle replacement bought: of its
// size, not ones it replaces, created since it was asked for (less the
// skew), newest first (then by name).
func renewedNodes(obs *types.PoolObservation, r *Replacement) []types.NodeObservation {
	var out []types.NodeObservation
	since := r.Since.Truncate(time.Second).Add(-createdSkew)
	for _, n := range obs.Nodes {
		if n.State == types.NodeReady && n.Size == r.Size && !slices.Contains(r.Old, n.Name) && !n.CreatedAt.Before(since) {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// replacementSize is what replaces node n: its own size while the policy
// allows it, else the cheapest allowed size known to hold its pods and
// the daemons' reserve.
func replacementSize(in DecisionInput, n types.NodeObservation) (string, bool) {
	if n.Size != "" && in.Policy.SizeAllowed(n.Size) {
		return n.Size, true
	}
	need := n.Requested.Add(n.Reserved)
	best, bestPrice := "", 0.0
	for size, price := range in.SizePrice {
		room, ok := in.SizeRoom[size]
		if !ok || !in.Policy.SizeAllowed(size) {
			continue
		}
		want := need
		if room.Pods == 0 {
			want.Pods = 0
		}
		if !want.Fits(room) {
			continue
		}
		if best == "" || price < bestPrice || (price == bestPrice && size < best) {
			best, bestPrice = size, price
		}
	}
	return best, best != ""
}

func anyProvisioning(obs *types.PoolObservation) bool {
	for _, n := range obs.Nodes {
		if n.State == types.NodeProvisioning {
			return true
		}
	}
	return false
}

func kind(d Due) string {
	switch {
	case d.Drifted && d.Expired:
		return "drifted and expired"
	case d.Expired:
		return "expired"
	}
	return "drifted"
}
