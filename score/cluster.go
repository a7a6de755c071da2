package score

import (
	"fmt"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Cluster is the simulated cluster a policy scales: nodes that boot after a
// provisioning delay, and a first-fit scheduler that binds pending pods onto
// ready nodes with room, with the planner's placement rules (GPU pods on
// GPU nodes of their model; other pods off GPU nodes while some size
// without GPUs holds them). Policies read it and call AddNodes and
// RemoveNode; everything is counted here, the same way for every policy.
type Cluster struct {
	epoch   time.Time
	now     time.Duration
	delay   time.Duration
	ceiling int
	catalog map[string]types.InstanceType
	// idleRule judges whether a node was idle when it was removed.
	idleRule types.Policy

	trace   []Pod
	pods    []podState
	nodes   []*simNode // in creation order
	byName  map[string]*simNode
	pending []int // pod indexes, in the order they became pending
	dirty   bool  // something changed that may let a pending pod bind
	seq     int
	// replacing are replacements waiting for their new node to be Ready.
	replacing []replacement
	// gen counts changes to where pods are and which nodes there are, so
	// a rule can tell that nothing changed since it last looked.
	gen int
	// spot is the spot variant's interruption model (nil: on demand).
	spot *spotState
	// watch: the watcher signals pools on changes (Options.WatchEvents).
	watch bool

	stats clusterStats
}

type podState struct {
	node         *simNode
	pendingSince time.Duration
	pending      bool
	// waited is the pod's total time pending; stretch its longest single wait.
	waited, stretch time.Duration
	fits            bool // some catalog size can hold it
	offGPU          bool
}

type simNode struct {
	name      string
	t         types.InstanceType
	alloc     types.Resources
	requested types.Resources
	pods      map[int]bool
	created   time.Duration
	readyAt   time.Duration
	ready     bool
	// cordoned nodes take no new pods: they wait to be replaced.
	cordoned bool
	// pinned counts the node's pods no drain may evict.
	pinned int
}

type clusterStats struct {
	scaleUps, scaleDowns     int
	nodesAdded, nodesRemoved int
	busyRemovals, evictions  int
	stranded                 int     // evicted pods that found no room at once
	replacements             int     // replacements completed (old nodes drained onto a new one)
	nodeSeconds, cost        float64 // of removed nodes; live ones are added at the end
	// interruptions are spot nodes taken back; disrupted the pods they held.
	interruptions, disrupted int
}

func newCluster(trace []Pod, catalog []types.InstanceType, delay time.Duration, ceiling int, idleRule types.Policy) *Cluster {
	c := &Cluster{
		epoch: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), delay: delay, ceiling: ceiling,
		catalog: make(map[string]types.InstanceType, len(catalog)), idleRule: idleRule,
		trace: trace, pods: make([]podState, len(trace)), byName: map[string]*simNode{},
	}
	for _, t := range catalog {
		c.catalog[t.Name] = t
	}
	for i, p := range trace {
		c.pods[i].fits, c.pods[i].offGPU = placeable(p, catalog)
	}
	return c
}

// placeable says whether some size holds the pod, and whether it must stay
// off GPU nodes (a size without GPUs holds it), as sizing's admits rule.
func placeable(p Pod, catalog []types.InstanceType) (fits, offGPU bool) {
	for _, t := range catalog {
		if !admitsPod(p, false, t) || !p.Requests.Fits(t.Allocatable()) {
			continue
		}
		fits = true
		if p.Requests.GPUs == 0 && t.GPUs == 0 {
			offGPU = true
		}
	}
	return fits, offGPU
}

func admitsPod(p Pod, offGPU bool, t types.InstanceType) bool {
	if p.Requests.GPUs > 0 {
		return t.GPUs > 0 && (p.GPUModel == "" || p.GPUModel == t.GPUModel)
	}
	return !(offGPU && t.GPUs > 0)
}

// WatchSignal is what a watcher with informers signals a pool on: the
// pending pods, and the nodes there are and how many are Ready; ok is
// false when the cluster is not watched (Options.WatchEvents).
func (c *Cluster) WatchSignal() (sig [3]int, ok bool) {
	if !c.watch {
		return sig, false
	}
	ready := 0
	for _, nd := range c.nodes {
		if nd.ready {
			ready++
		}
	}
	return [3]int{len(c.pending), len(c.nodes), ready}, true
}

// Now is the simulated wall clock.
func (c *Cluster) Now() time.Time { return c.epoch.Add(c.now) }

// Nodes counts the nodes that exist (booting or ready).
func (c *Cluster) Nodes() int { return len(c.nodes) }

// AddNodes asks for n nodes of a size; they are Ready after the delay. It
// adds at most what the ceiling allows and returns how many it added.
func (c *Cluster) AddNodes(size string, n int) (int, error) {
	t, ok := c.catalog[size]
	if !ok {
		return 0, fmt.Errorf("size %q is not in the catalog", size)
	}
	n = min(n, c.ceiling-len(c.nodes))
	if n <= 0 {
		return 0, nil
	}
	for range n {
		c.addNode(t, c.now+c.delay)
	}
	c.stats.scaleUps++
	c.stats.nodesAdded += n
	return n, nil
}

func (c *Cluster) addNode(t types.InstanceType, readyAt time.Duration) *simNode {
	c.seq++
	nd := &simNode{
		name: fmt.Sprintf("node-%06d", c.seq), t: t, alloc: t.Allocatable(), pods: map[int]bool{},
		created: c.now, readyAt: readyAt, ready: readyAt <= c.now,
	}
	c.nodes = append(c.nodes, nd)
	c.byName[nd.name] = nd
	if c.spot != nil {
		c.spot.draw(nd, c.now)
	}
	c.dirty, c.gen = true, c.gen+1
	return nd
}

// RemoveNodes drains and deletes the named nodes as one scale-down
// operation: their pods are evicted and pending again, and the scheduler
// places them at once where there is room. A node removed while above the
// idle thresholds is counted as removed while busy unless every pod evicted
// from it found room on the nodes that stay (it was unneeded); an evicted
// pod that found none is counted as stranded.
func (c *Cluster) RemoveNodes(names []string) error {
	for _, name := range names {
		nd := c.byName[name]
		if nd == nil {
			return fmt.Errorf("no node %q", name)
		}
		if nd.pinned > 0 {
			return fmt.Errorf("node %s holds %d pods that must not be evicted", name, nd.pinned)
		}
	}
	if len(names) == 0 {
		return nil
	}
	busy := make([]bool, len(names))
	evicted := make([][]int, len(names))
	for k, name := range names {
		nd := c.byName[name]
		obs := c.observeNode(nd)
		busy[k] = nd.ready && !(obs.CPUUtilization() < c.idleRule.IdleCPUThreshold && obs.MemoryUtilization() < c.idleRule.IdleMemoryThreshold)
		for _, i := range nd.podList() {
			c.unbind(i)
			c.pods[i].pending, c.pods[i].pendingSince = true, c.now
			c.pending = append(c.pending, i)
			c.stats.evictions++
			evicted[k] = append(evicted[k], i)
		}
		c.retire(nd)
	}
	c.dirty, c.gen = true, c.gen+1
	c.schedule()
	for k := range names {
		stranded := 0
		for _, i := range evicted[k] {
			if c.pods[i].pending {
				stranded++
			}
		}
		c.stats.stranded += stranded
		if busy[k] && stranded > 0 {
			c.stats.busyRemovals++
		}
	}
	c.stats.scaleDowns++
	c.stats.nodesRemoved += len(names)
	return nil
}

func (c *Cluster) retire(nd *simNode) {
	c.gen++
	life := (c.now - nd.created).Seconds()
	c.stats.nodeSeconds += life
	c.stats.cost += life / 3600 * nd.t.HourlyPrice
	delete(c.byName, nd.name)
	for i, x := range c.nodes {
		if x == nd {
			c.nodes = append(c.nodes[:i], c.nodes[i+1:]...)
			break
		}
	}
}

func (c *Cluster) unbind(i int) {
	c.gen++
	nd := c.pods[i].node
	delete(nd.pods, i)
	nd.requested = nd.requested.Sub(c.trace[i].Requests)
	if c.trace[i].NotEvictable {
		nd.pinned--
	}
	c.pods[i].node = nil
}

func (c *Cluster) bind(i int, nd *simNode) {
	c.gen++
	c.endWait(i)
	c.pods[i].node = nd
	nd.pods[i] = true
	nd.requested = nd.requested.Add(c.trace[i].Requests)
	if c.trace[i].NotEvictable {
		nd.pinned++
	}
}

func (c *Cluster) observeNode(nd *simNode) types.NodeObservation {
	state := types.NodeReady
	if !nd.ready {
		state = types.NodeProvisioning
	}
	var largest types.Resources
	for i := range nd.pods {
		r := c.trace[i].Requests
		largest = types.Resources{MilliCPU: max(largest.MilliCPU, r.MilliCPU), Memory: max(largest.Memory, r.Memory),
			GPUs: max(largest.GPUs, r.GPUs), Pods: max(largest.Pods, r.Pods)}
	}
	var blockers []string
	if nd.pinned > 0 {
		blockers = []string{fmt.Sprintf("%d pods must not be evicted", nd.pinned)}
	}
	return types.NodeObservation{
		DrainBlockers: blockers,
		Name:          nd.name, ProviderID: "sim://" + nd.name, Size: nd.t.Name, State: state,
		CreatedAt: c.epoch.Add(nd.created), Allocatable: nd.alloc, Requested: nd.requested, LargestPod: largest,
	}
}

// arrive makes pod i pending.
func (c *Cluster) arrive(i int) {
	c.pods[i].pending, c.pods[i].pendingSince = true, c.trace[i].Arrive
	c.pending = append(c.pending, i)
	c.dirty, c.gen = true, c.gen+1
}

// depart removes pod i wherever it is.
func (c *Cluster) depart(i int) {
	s := &c.pods[i]
	switch {
	case s.node != nil:
		c.unbind(i)
		c.dirty, c.gen = true, c.gen+1
	case s.pending:
		c.endWait(i)
		for k, j := range c.pending {
			if j == i {
				c.pending = append(c.pending[:k], c.pending[k+1:]...)
				break
			}
		}
	}
}

func (c *Cluster) endWait(i int) {
	s := &c.pods[i]
	w := max(0, c.now-s.pendingSince)
	s.waited += w
	s.stretch = max(s.stretch, w)
	s.pending = false
}

// schedule binds pending pods first-fit onto ready nodes in creation
// order. Shapes that found no room are not tried again in the same pass.
func (c *Cluster) schedule() {
	if !c.dirty || len(c.pending) == 0 {
		c.dirty = false
		return
	}
	c.dirty = false
	type key struct {
		r      types.Resources
		model  string
		offGPU bool
	}
	full := map[key]bool{}
	kept := c.pending[:0]
	for _, i := range c.pending {
		p, s := c.trace[i], &c.pods[i]
		k := key{p.Requests, p.GPUModel, s.offGPU}
		if !s.fits || full[k] {
			kept = append(kept, i)
			continue
		}
		var to *simNode
		for _, nd := range c.nodes {
			if nd.ready && !nd.cordoned && admitsPod(p, s.offGPU, nd.t) && p.Requests.Fits(nd.alloc.Sub(nd.requested)) {
				to = nd
				break
			}
		}
		if to == nil {
			full[k] = true
			kept = append(kept, i)
			continue
		}
		c.bind(i, to)
	}
	c.pending = kept
}

// Pending are the pods waiting now (unschedulable on the nodes there are),
// with the time each started waiting.
func (c *Cluster) Pending() []types.PendingPod {
	out := make([]types.PendingPod, 0, len(c.pending))
	for _, i := range c.pending {
		p := c.trace[i]
		out = append(out, types.PendingPod{
			Namespace: "trace", Name: p.Name, Org: "score", Project: "score", Service: "score",
			Requests: p.Requests, GPUModel: p.GPUModel, UnschedulableSince: c.epoch.Add(c.pods[i].pendingSince),
		})
	}
	return out
}

// Observe is what the cluster watcher would report now.
func (c *Cluster) Observe(pool types.PoolKey) types.PoolObservation {
	obs := types.PoolObservation{Pool: pool, ObservedAt: c.Now(), Reason: "sample", PendingPods: c.Pending()}
	obs.Nodes = make([]types.NodeObservation, len(c.nodes))
	for i, nd := range c.nodes {
		obs.Nodes[i] = c.observeNode(nd)
	}
	return obs
}

// podList is the node's pods in trace order, so evictions replay the same
// way every run.
func (nd *simNode) podList() []int {
	out := make([]int, 0, len(nd.pods))
	for i := range nd.pods {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}
