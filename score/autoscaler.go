package score

import (
	"cmp"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// ClusterAutoscaler is a rule in the manner of the Kubernetes
// cluster-autoscaler with its defaults: every scan (10 s) it scales up for
// pods that fit on no node (booting nodes count as room), estimating each
// size by first-fit-decreasing binpacking and choosing the least-waste
// size; it marks a ready node unneeded when its utilization (the highest of
// CPU, memory and GPU requests over allocatable) is under 50 % and its pods
// fit on the other nodes, and removes nodes unneeded for 10 minutes: empty
// ones up to 10 at a time, otherwise one, never within 10 minutes of a
// scale-up. It is its own rule, not the project's law.
type ClusterAutoscaler struct {
	Scan                 time.Duration
	UtilizationThreshold float64
	UnneededTime         time.Duration
	DelayAfterAdd        time.Duration
	MaxEmptyBulkDelete   int
	MinNodes             int
	catalog              []types.InstanceType
	lastScan, lastAdd    time.Time
	unneededSince        map[string]time.Time
}

// NewClusterAutoscaler uses the cluster-autoscaler's defaults and the pool's floor.
func NewClusterAutoscaler(pool types.Policy, catalog []types.InstanceType) *ClusterAutoscaler {
	return &ClusterAutoscaler{
		Scan: 10 * time.Second, UtilizationThreshold: 0.5, UnneededTime: 10 * time.Minute,
		DelayAfterAdd: 10 * time.Minute, MaxEmptyBulkDelete: 10, MinNodes: pool.MinNodes,
		catalog: catalog, unneededSince: map[string]time.Time{},
	}
}

func (a *ClusterAutoscaler) Name() string { return "cluster-autoscaler-like" }

func (a *ClusterAutoscaler) Step(c *Cluster) error {
	now := c.Now()
	if !a.lastScan.IsZero() && now.Sub(a.lastScan) < a.Scan {
		return nil
	}
	a.lastScan = now
	added, err := a.scaleUp(c)
	if err != nil || added > 0 {
		return err
	}
	return a.scaleDown(c)
}

// room is a node's free capacity during a simulation of placements.
type room struct {
	t    types.InstanceType
	free types.Resources
}

func fitFirst(rooms []room, p Pod, offGPU bool) bool {
	for k := range rooms {
		if admitsPod(p, offGPU, rooms[k].t) && p.Requests.Fits(rooms[k].free) {
			rooms[k].free = rooms[k].free.Sub(p.Requests)
			return true
		}
	}
	return false
}

func (a *ClusterAutoscaler) scaleUp(c *Cluster) (int, error) {
	// Pods that booting nodes will take are not sized again.
	var booting []room
	for _, nd := range c.nodes {
		if !nd.ready {
			booting = append(booting, room{nd.t, nd.alloc.Sub(nd.requested)})
		}
	}
	var need []int
	for _, i := range c.pending {
		if c.pods[i].fits && !fitFirst(booting, c.trace[i], c.pods[i].offGPU) {
			need = append(need, i)
		}
	}
	if len(need) == 0 {
		return 0, nil
	}
	slices.SortStableFunc(need, func(x, y int) int {
		rx, ry := c.trace[x].Requests, c.trace[y].Requests
		return cmp.Or(cmp.Compare(ry.GPUs, rx.GPUs), cmp.Compare(ry.MilliCPU, rx.MilliCPU), cmp.Compare(ry.Memory, rx.Memory))
	})
	type option struct {
		t     types.InstanceType
		nodes int
		waste float64
		pods  int
	}
	var best *option
	for _, t := range a.catalog {
		var rooms []room
		helped := 0
		for _, i := range need {
			p := c.trace[i]
			if !admitsPod(p, c.pods[i].offGPU, t) || !p.Requests.Fits(t.Allocatable()) {
				continue
			}
			if !fitFirst(rooms, p, c.pods[i].offGPU) {
				rooms = append(rooms, room{t, t.Allocatable()})
				fitFirst(rooms[len(rooms)-1:], p, c.pods[i].offGPU)
			}
			helped++
		}
		if helped == 0 {
			continue
		}
		// Least waste: unused CPU and memory share over the new nodes.
		var freeCPU, freeMem float64
		for _, r := range rooms {
			freeCPU += float64(r.free.MilliCPU) / float64(t.Allocatable().MilliCPU)
			freeMem += float64(r.free.Memory) / float64(t.Allocatable().Memory)
		}
		o := option{t: t, nodes: len(rooms), waste: (freeCPU + freeMem) / float64(2*len(rooms)), pods: helped}
		if best == nil || o.pods > best.pods || (o.pods == best.pods && (o.waste < best.waste || (o.waste == best.waste && o.t.HourlyPrice*float64(o.nodes) < best.t.HourlyPrice*float64(best.nodes)))) {
			best = &o
		}
	}
	if best == nil {
		return 0, nil
	}
	added, err := c.AddNodes(best.t.Name, best.nodes)
	if added > 0 {
		a.lastAdd = c.Now()
	}
	return added, err
}

func utilization(nd *simNode) float64 {
	u := 0.0
	for _, f := range [][2]int64{{nd.requested.MilliCPU, nd.alloc.MilliCPU}, {nd.requested.Memory, nd.alloc.Memory}, {nd.requested.GPUs, nd.alloc.GPUs}} {
		if f[1] > 0 {
			u = max(u, float64(f[0])/float64(f[1]))
		}
	}
	return u
}

func (a *ClusterAutoscaler) scaleDown(c *Cluster) error {
	now := c.Now()
	// Unneeded: low utilization and every pod fits on the other ready nodes.
	rooms := make([]room, 0, len(c.nodes))
	index := map[*simNode]int{}
	for _, nd := range c.nodes {
		if nd.ready {
			index[nd] = len(rooms)
			rooms = append(rooms, room{nd.t, nd.alloc.Sub(nd.requested)})
		}
	}
	seen := map[string]bool{}
	var empty, movable []*simNode
	var trial []room // reused: one scan tries every low node
	for _, nd := range c.nodes {
		// A node holding a pod no drain may evict is not a candidate.
		if !nd.ready || nd.pinned > 0 || utilization(nd) >= a.UtilizationThreshold {
			continue
		}
		trial = append(trial[:0], rooms...)
		trial[index[nd]].free = types.Resources{}
		ok := true
		for _, i := range nd.podList() {
			if !fitFirst(trial, c.trace[i], c.pods[i].offGPU) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		seen[nd.name] = true
		since, was := a.unneededSince[nd.name]
		if !was {
			a.unneededSince[nd.name] = now
			continue
		}
		if now.Sub(since) < a.UnneededTime {
			continue
		}
		if len(nd.pods) == 0 {
			empty = append(empty, nd)
		} else {
			movable = append(movable, nd)
		}
	}
	for name := range a.unneededSince {
		if !seen[name] {
			delete(a.unneededSince, name)
		}
	}
	if now.Sub(a.lastAdd) < a.DelayAfterAdd {
		return nil
	}
	spare := len(c.nodes) - a.MinNodes
	var remove []string
	for _, nd := range empty {
		if len(remove) >= min(spare, a.MaxEmptyBulkDelete) {
			break
		}
		remove = append(remove, nd.name)
	}
	if len(remove) == 0 && len(movable) > 0 && spare > 0 {
		remove = append(remove, movable[0].name)
	}
	for _, name := range remove {
		delete(a.unneededSince, name)
	}
	return c.RemoveNodes(remove)
}
