package poolcore

import (
	"github.com/hanzoai/visor-fleet/types"
)

// maxAdditionsKept bounds the runaway guard's record of scale-ups.
const maxAdditionsKept = 100

// Planned is a scale-up plan's answer about the pool's sizes: what the
// cost budget cut, and each allowed size's room, zones, price and GPU
// model, which booting machines and later decisions count with.
type Planned struct {
	Budget       string
	SizeRoom     map[string]types.Resources
	SizeZones    map[string][]string
	SizePrice    map[string]float64
	SizeGPUModel map[string]string
}

func (e Planned) applyTo(s *State, _ Env) []Rejection {
	s.Budget = e.Budget
	if len(e.SizeRoom) > 0 {
		s.SizeRoom, s.SizeZones = e.SizeRoom, e.SizeZones
	}
	if len(e.SizePrice) > 0 {
		s.SizePrice = e.SizePrice
	}
	if len(e.SizeGPUModel) > 0 {
		s.SizeGPUModel = e.SizeGPUModel
	}
	return nil
}

// Bought is a purchase the provider took: the pods it was for are judged
// by later observations (trackPurchases), and its nodes count in the
// runaway guard until a pod bought for is scheduled.
type Bought struct {
	Seq      int64
	Size     string
	NewNodes int
	// For are the pods the plan placed, less headroom and forecast
	// stand-ins.
	For []types.PendingPod
}

func (e Bought) applyTo(s *State, env Env) []Rejection {
	for _, pod := range e.For {
		delete(s.Deferred, pod.Key())
		if _, known := s.BoughtFor[pod.Key()]; !known && len(s.BoughtFor) < MaxPendingKept {
			s.BoughtFor[pod.Key()] = Purchase{Seq: e.Seq, At: env.Now, Size: e.Size, Since: pod.UnschedulableSince}
		}
	}
	s.Additions = append(s.Additions, Addition{At: env.Now, Nodes: e.NewNodes})
	if len(s.Additions) > maxAdditionsKept {
		s.Additions = s.Additions[len(s.Additions)-maxAdditionsKept:]
	}
	return nil
}
