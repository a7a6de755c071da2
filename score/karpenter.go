package score

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Karpenter is a rule in the manner of kubernetes-sigs/karpenter (v1, a
// NodePool with consolidationPolicy WhenEmptyOrUnderutilized,
// consolidateAfter 0 and the default budget of 10 % of nodes), learnt from
// its documented behaviour (pkg/controllers/provisioning and
// pkg/controllers/disruption), not copied:
//
//   - provisioning batches pending pods (the window closes after 1 s
//     without a new one, or 10 s after the first), then schedules every
//     pending pod first-fit decreasing (CPU, then memory) onto the nodes
//     there are, booting ones included, then onto new NodeClaims (the one
//     with fewest pods first); a NodeClaim keeps the sizes that hold all
//     its pods and launches the cheapest of them;
//   - disruption runs every 10 s and takes the first method that finds a
//     command, in Karpenter's order: emptiness (karpenter_emptiness.go),
//     multi-node (karpenter_multinode.go), single-node
//     (karpenter_singlenode.go) consolidation. A node is a candidate once
//     Ready unless it holds a pod no drain may evict; candidates are tried
//     in Karpenter's order (price over 1 + pods, highest first).
//
// Two things of the cluster it runs on are the simulator's, not
// Karpenter's: the pool's floor is kept (every policy is held to it, and
// the bounds count it), and it acts on the simulator's 10 s ticks. It does
// not model spot, zones, topology spread, drift, expiry, the 15 s
// validation wait before a command runs, or a second consolidation while a
// replacement boots (Karpenter may run another; this rule waits).
type Karpenter struct {
	BatchIdle, BatchMax time.Duration
	DisruptionPoll      time.Duration
	// BudgetPercent of the nodes (rounded up) may be disrupted at once.
	BudgetPercent int
	// MaxMultiCandidates is how many candidates multi-node consolidation weighs.
	MaxMultiCandidates int
	MinNodes           int

	sizes    []kSize // cheapest first
	maxAlloc types.Resources
	// lastRun is when provisioning last scheduled; pods pending since
	// after it open the next batch.
	lastRun  time.Duration
	ran      bool
	lastPoll time.Duration
	polled   bool

	// base is this poll's rooms (every node not cordoned), slot each
	// node's index in it; buf is a copy a simulation may spend.
	base, buf []kRoom
	slot      map[*simNode]int
	readyFree types.Resources
	// consolidated is the cluster's gen when each method last found
	// nothing: as Karpenter's IsConsolidated, it looks again only once
	// something changed.
	consolidated map[string]int
}

// kSize is a catalog size with its allocatable worked out once.
type kSize struct {
	t     types.InstanceType
	alloc types.Resources
}

// NewKarpenter uses Karpenter's defaults and the pool's floor.
func NewKarpenter(pool types.Policy, catalog []types.InstanceType) *Karpenter {
	k := &Karpenter{
		BatchIdle: time.Second, BatchMax: 10 * time.Second, DisruptionPoll: 10 * time.Second,
		BudgetPercent: 10, MaxMultiCandidates: 100, MinNodes: pool.MinNodes,
		slot: map[*simNode]int{}, consolidated: map[string]int{},
	}
	for _, t := range catalog {
		a := t.Allocatable()
		k.sizes = append(k.sizes, kSize{t, a})
		k.maxAlloc = types.Resources{MilliCPU: max(k.maxAlloc.MilliCPU, a.MilliCPU), Memory: max(k.maxAlloc.Memory, a.Memory),
			GPUs: max(k.maxAlloc.GPUs, a.GPUs), Pods: max(k.maxAlloc.Pods, a.Pods), EphemeralStorage: max(k.maxAlloc.EphemeralStorage, a.EphemeralStorage)}
	}
	slices.SortStableFunc(k.sizes, func(a, b kSize) int {
		return cmp.Or(cmp.Compare(a.t.HourlyPrice, b.t.HourlyPrice), cmp.Compare(a.t.Name, b.t.Name))
	})
	return k
}

func (k *Karpenter) Name() string { return "karpenter-like" }

func (k *Karpenter) Step(c *Cluster) error {
	if err := k.provision(c); err != nil {
		return err
	}
	if k.polled && c.now-k.lastPoll < k.DisruptionPoll {
		return nil
	}
	k.polled, k.lastPoll = true, c.now
	c.schedule() // pods bind before the disruption controller looks
	cands, budget := k.candidates(c)
	if len(cands) == 0 || budget <= 0 {
		return nil
	}
	k.look(c)
	for _, m := range []struct {
		name string
		run  func(*Cluster, []*simNode, int) (bool, error)
	}{{"emptiness", k.emptiness}, {"multi", k.multiNode}, {"single", k.singleNode}} {
		if at, ok := k.consolidated[m.name]; ok && at == c.gen {
			continue
		}
		acted, err := m.run(c, cands, budget)
		if acted || err != nil {
			return err
		}
		k.consolidated[m.name] = c.gen
	}
	return nil
}

// look takes this poll's rooms.
func (k *Karpenter) look(c *Cluster) {
	k.base = k.base[:0]
	clear(k.slot)
	k.readyFree = types.Resources{}
	for _, nd := range c.nodes {
		if nd.cordoned {
			continue
		}
		k.slot[nd] = len(k.base)
		free := nd.alloc.Sub(nd.requested)
		k.base = append(k.base, kRoom{nd, free})
		if nd.ready {
			k.readyFree = k.readyFree.Add(free)
		}
	}
}

// batchClosed says whether the pods pending since the last run have
// closed their batch window by now: 1 s with no new pod, or 10 s.
func (k *Karpenter) batchClosed(c *Cluster) bool {
	var times []time.Duration
	for _, i := range c.pending {
		if s := c.pods[i]; s.fits && (!k.ran || s.pendingSince > k.lastRun) {
			times = append(times, s.pendingSince)
		}
	}
	if len(times) == 0 {
		// Nothing new: pods still pending from an earlier batch (the
		// ceiling, an eviction) are scheduled again on the next poll.
		return k.ran && c.now-k.lastRun >= k.BatchMax && k.unplacedPending(c)
	}
	slices.Sort(times)
	closes := times[0] + k.BatchMax
	for j := 1; j < len(times); j++ {
		if times[j]-times[j-1] > k.BatchIdle {
			closes = min(closes, times[j-1]+k.BatchIdle)
			break
		}
	}
	closes = min(closes, times[len(times)-1]+k.BatchIdle)
	return closes <= c.now
}

func (k *Karpenter) unplacedPending(c *Cluster) bool {
	for _, i := range c.pending {
		if c.pods[i].fits {
			return true
		}
	}
	return false
}

// provision schedules every pending pod when a batch closes and launches
// the NodeClaims the pods need, each as its cheapest size.
func (k *Karpenter) provision(c *Cluster) error {
	if !k.batchClosed(c) {
		return nil
	}
	k.ran, k.lastRun = true, c.now
	var pods []int
	for _, i := range c.pending {
		if c.pods[i].fits {
			pods = append(pods, i)
		}
	}
	rooms := make([]kRoom, 0, len(c.nodes))
	for _, nd := range c.nodes {
		if !nd.cordoned {
			rooms = append(rooms, kRoom{nd, nd.alloc.Sub(nd.requested)})
		}
	}
	_, claims := k.solve(c, rooms, pods)
	count := map[string]int{}
	var order []string
	for _, cl := range claims {
		name := k.cheapest(cl).t.Name
		if count[name] == 0 {
			order = append(order, name)
		}
		count[name]++
	}
	for _, name := range order {
		if _, err := c.AddNodes(name, count[name]); err != nil {
			return err
		}
	}
	return nil
}

// kRoom is a node's free capacity during a scheduling simulation.
type kRoom struct {
	nd   *simNode
	free types.Resources
}

// kClaim is a NodeClaim being filled: the sizes (indexes into
// Karpenter.sizes, cheapest first) that still hold its pods.
type kClaim struct {
	sizes []int
	used  types.Resources
	pods  int
}

// Placement outcomes of solve besides a room index.
const (
	onClaim  = -1
	unplaced = -2
)

// solve is Karpenter's scheduling simulation: pods in decreasing CPU then
// memory, each onto the first room that holds it, else onto an open
// NodeClaim (fewest pods first), else onto a new one. It returns where
// each pod (in the order given) went and the NodeClaims.
func (k *Karpenter) solve(c *Cluster, rooms []kRoom, pods []int) ([]int, []*kClaim) {
	order := make([]int, len(pods))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, rb := c.trace[pods[a]].Requests, c.trace[pods[b]].Requests
		return cmp.Or(cmp.Compare(rb.MilliCPU, ra.MilliCPU), cmp.Compare(rb.Memory, ra.Memory), cmp.Compare(pods[a], pods[b]))
	})
	where := make([]int, len(pods))
	var claims []*kClaim
next:
	for _, j := range order {
		i := pods[j]
		p, offGPU := c.trace[i], c.pods[i].offGPU
		for r := range rooms {
			if p.Requests.Fits(rooms[r].free) && admitsPod(p, offGPU, rooms[r].nd.t) {
				rooms[r].free = rooms[r].free.Sub(p.Requests)
				where[j] = r
				continue next
			}
		}
		slices.SortStableFunc(claims, func(a, b *kClaim) int { return cmp.Compare(a.pods, b.pods) })
		for _, cl := range claims {
			if k.add(cl, p, offGPU) {
				where[j] = onClaim
				continue next
			}
		}
		cl := &kClaim{}
		if k.add(cl, p, offGPU) {
			claims = append(claims, cl)
			where[j] = onClaim
			continue
		}
		where[j] = unplaced
	}
	return where, claims
}

// add keeps the claim's sizes that hold the pod too; false (and the claim
// unchanged) when none does.
func (k *Karpenter) add(cl *kClaim, p Pod, offGPU bool) bool {
	used := cl.used.Add(p.Requests)
	holds := func(z int) bool { return admitsPod(p, offGPU, k.sizes[z].t) && used.Fits(k.sizes[z].alloc) }
	if cl.pods == 0 {
		for z := range k.sizes {
			if holds(z) {
				cl.sizes = append(cl.sizes, z)
			}
		}
	} else {
		if !slices.ContainsFunc(cl.sizes, holds) {
			return false
		}
		cl.sizes = slices.DeleteFunc(cl.sizes, func(z int) bool { return !holds(z) })
	}
	if len(cl.sizes) == 0 {
		return false
	}
	cl.used = used
	cl.pods++
	return true
}

// cheapest is the size a NodeClaim launches as.
func (k *Karpenter) cheapest(cl *kClaim) kSize { return k.sizes[cl.sizes[0]] }

// candidates are the Ready nodes consolidation may disrupt, in Karpenter's
// order, and how many the budget allows now.
func (k *Karpenter) candidates(c *Cluster) ([]*simNode, int) {
	var out []*simNode
	for _, nd := range c.nodes {
		if nd.ready && !nd.cordoned && nd.pinned == 0 {
			out = append(out, nd)
		}
	}
	slices.SortStableFunc(out, func(a, b *simNode) int {
		ra, rb := a.t.HourlyPrice/float64(1+len(a.pods)), b.t.HourlyPrice/float64(1+len(b.pods))
		return cmp.Or(cmp.Compare(rb, ra), cmp.Compare(a.name, b.name))
	})
	budget := int(math.Ceil(float64(k.BudgetPercent)*float64(len(c.nodes))/100)) - c.Cordoned()
	return out, budget
}

// spare is how many nodes may go without going below the floor, counting
// the nodes being replaced as gone.
func (k *Karpenter) spare(c *Cluster) int {
	return len(c.nodes) - c.Cordoned() - k.MinNodes
}

// consolidation is what simulating the removal of candidates found: they
// can go (delete), or go for one new node of size (replace).
type consolidation struct {
	ok      bool
	replace *kSize
}

// simulate reschedules the candidates' pods, with every pending pod, onto
// the other nodes and at most one new NodeClaim. Karpenter's rules: every
// candidate pod must land on a Ready node or the NodeClaim (not a booting
// node); no NodeClaim deletes; one replaces when some size that holds it
// is strictly cheaper than the candidates together (and, for several
// candidates, cheaper than any candidate of the same size).
func (k *Karpenter) simulate(c *Cluster, cands []*simNode) consolidation {
	var need types.Resources
	price := 0.0
	room := k.readyFree.Add(k.maxAlloc)
	for _, nd := range cands {
		need = need.Add(nd.requested)
		price += nd.t.HourlyPrice
		room = room.Sub(k.base[k.slot[nd]].free)
	}
	// A cheap necessary test first: the pods' sum fits the free room of
	// the Ready nodes that stay plus one node of the largest size.
	if !need.Fits(room) {
		return consolidation{}
	}
	// The candidates' own rooms take nothing: they are going.
	k.buf = append(k.buf[:0], k.base...)
	for _, nd := range cands {
		k.buf[k.slot[nd]].free = types.Resources{MilliCPU: -1}
	}
	rooms := k.buf
	var pods []int
	for _, i := range c.pending {
		if c.pods[i].fits {
			pods = append(pods, i)
		}
	}
	waiting := len(pods)
	for _, nd := range cands {
		pods = append(pods, nd.podList()...)
	}
	where, claims := k.solve(c, rooms, pods)
	for j := waiting; j < len(pods); j++ {
		if where[j] == unplaced || (where[j] >= 0 && !rooms[where[j]].nd.ready) {
			return consolidation{}
		}
	}
	switch len(claims) {
	case 0:
		return consolidation{ok: true}
	case 1:
	default:
		return consolidation{}
	}
	limit := price
	if len(cands) > 1 {
		for _, nd := range cands {
			for _, z := range claims[0].sizes {
				if k.sizes[z].t.Name == nd.t.Name {
					limit = min(limit, nd.t.HourlyPrice)
				}
			}
		}
	}
	if s := k.cheapest(claims[0]); s.t.HourlyPrice < limit {
		return consolidation{ok: true, replace: &s}
	}
	return consolidation{}
}

// execute carries out a consolidation of cands.
func (k *Karpenter) execute(c *Cluster, cands []*simNode, cons consolidation) error {
	names := make([]string, len(cands))
	for j, nd := range cands {
		names[j] = nd.name
	}
	if cons.replace == nil {
		return c.RemoveNodes(names)
	}
	_, err := c.ReplaceNodes(names, cons.replace.t.Name)
	return err
}
