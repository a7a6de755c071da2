package score

import "time"

// Spend says where a run's node-hours went, tick by tick: booting nodes,
// Ready nodes under half used (the highest of CPU, memory and GPU
// requests over allocatable), and of those the ones the floor keeps (the
// pool at or below its minimum). Drains are instant in the simulator, so
// draining time is none.
type Spend struct {
	Booting   float64
	Underused float64
	Floor     float64
	// BySize is the node-hours of each size bought.
	BySize map[string]float64
}

// underusedBelow is the share of allocatable under which a node counts as
// underused in Spend (the cluster-autoscaler's default threshold).
const underusedBelow = 0.5

func (c *Cluster) account(s *Spend, tick time.Duration, floor int) {
	h := tick.Hours()
	if s.BySize == nil {
		s.BySize = map[string]float64{}
	}
	for _, nd := range c.nodes {
		s.BySize[nd.t.Name] += h
		if !nd.ready {
			s.Booting += h
			continue
		}
		if nodeUse(nd) < underusedBelow {
			s.Underused += h
			if len(c.nodes) <= floor {
				s.Floor += h
			}
		}
	}
}

func nodeUse(nd *simNode) float64 {
	share := func(used, have int64) float64 {
		if have <= 0 {
			return 0
		}
		return float64(used) / float64(have)
	}
	return max(share(nd.requested.MilliCPU, nd.alloc.MilliCPU), share(nd.requested.Memory, nd.alloc.Memory),
		share(nd.requested.GPUs, nd.alloc.GPUs))
}
