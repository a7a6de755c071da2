package score

import (
	"math/rand/v2"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Spot is the spot variant's model: every node is bought as spot (a
// [spot, on-demand] pool whose spot capacity never runs out), at the
// catalog's cheapest spot offering of its size or, where the catalog has
// none, at PriceFactor of the on-demand price; each node is interrupted
// after a time drawn from an exponential with InterruptionsPerNodeHour,
// seeded, so a run is reproducible. On the notice the pool does what the
// workflow does (workflows/pool_interruptions.go): it buys a replacement
// of the same size at once and drains the node (instantly in the
// simulator); the evicted pods wait for room like any pending pod.
type Spot struct {
	PriceFactor              float64
	InterruptionsPerNodeHour float64
	Seed                     uint64
}

// Defaults of the spot model.
const (
	// DefaultSpotPriceFactor: EC2 spot prices run at roughly a third of
	// on-demand for general-purpose sizes.
	DefaultSpotPriceFactor = 0.35
	// DefaultSpotInterruptions is a pessimistic rate, about one
	// interruption per node every two days (the Spot Instance Advisor's
	// worst band is "more than 20 % a month"), so a one-day trace shows
	// what interruptions cost.
	DefaultSpotInterruptions = 0.02
)

func (s Spot) withDefaults() Spot {
	if s.PriceFactor <= 0 {
		s.PriceFactor = DefaultSpotPriceFactor
	}
	if s.InterruptionsPerNodeHour < 0 {
		s.InterruptionsPerNodeHour = 0
	}
	return s
}

// SpotPrices is the catalog priced as spot: each size at its cheapest
// spot offering, or at factor × its on-demand price without one.
func SpotPrices(catalog []types.InstanceType, factor float64) []types.InstanceType {
	out := make([]types.InstanceType, len(catalog))
	for i, t := range catalog {
		price := t.HourlyPrice * factor
		found := false
		for _, o := range t.Offerings {
			if o.CapacityType == types.CapacitySpot && o.Available && (!found || o.HourlyPrice < price) {
				price, found = o.HourlyPrice, true
			}
		}
		t.HourlyPrice = price
		out[i] = t
	}
	return out
}

// spotState draws each node's interruption and counts what they did.
type spotState struct {
	rate float64
	rng  *rand.Rand
	// at is each spot node's notice time.
	at map[*simNode]time.Duration
}

func newSpotState(s Spot) *spotState {
	return &spotState{rate: s.InterruptionsPerNodeHour, rng: rand.New(rand.NewPCG(s.Seed, 0x5b07)), at: map[*simNode]time.Duration{}}
}

// draw sets the new node's notice time.
func (s *spotState) draw(nd *simNode, now time.Duration) {
	if s.rate > 0 {
		s.at[nd] = now + time.Duration(s.rng.ExpFloat64()/s.rate*float64(time.Hour))
	}
}

// interrupt acts on the notices due now, in node creation order: a
// replacement of the same size, then the node drained and gone. The
// replacement is no scale-up of the policy's: it keeps the node count.
func (c *Cluster) interrupt() {
	if c.spot == nil {
		return
	}
	for _, nd := range append([]*simNode(nil), c.nodes...) {
		at, ok := c.spot.at[nd]
		if !ok || at > c.now {
			continue
		}
		delete(c.spot.at, nd)
		c.stats.interruptions++
		c.addNode(nd.t, c.now+c.delay)
		for _, i := range nd.podList() {
			c.unbind(i)
			c.pods[i].pending, c.pods[i].pendingSince = true, c.now
			c.pending = append(c.pending, i)
			c.stats.disrupted++
		}
		c.retire(nd)
		c.dirty, c.gen = true, c.gen+1
	}
}
