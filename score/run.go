package score

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Controller is one scaling policy under test. Step runs every simulation
// tick; it reads the cluster and calls AddNodes and RemoveNodes.
type Controller interface {
	Name() string
	Step(c *Cluster) error
}

// Options are the simulation's knobs; the zero value of each field takes
// the default.
type Options struct {
	// Tick is the simulation step (default 10 s, the cluster-autoscaler's scan).
	Tick time.Duration
	// ProvisioningDelay is how long a new node takes to become Ready (default 60 s).
	ProvisioningDelay time.Duration
	// SeriesEvery is how often node count and demand are recorded for plots (default 1 min).
	SeriesEvery time.Duration
	// Spot, when set, buys every node as spot and interrupts them (spot.go).
	Spot *Spot
	// WatchEvents models a cluster watched through informers (a cluster
	// spec's `informers: true`): the watcher signals a pool within
	// activities.EventInterval (1 s, so at the next tick here) of a pod
	// becoming unschedulable or scheduled, or a node joining, leaving or
	// becoming Ready, besides its sample every sampleInterval. Off, the
	// law hears of the cluster only at its samples.
	WatchEvents bool
}

func (o Options) withDefaults() Options {
	if o.Tick <= 0 {
		o.Tick = 10 * time.Second
	}
	if o.ProvisioningDelay <= 0 {
		o.ProvisioningDelay = 60 * time.Second
	}
	if o.SeriesEvery <= 0 {
		o.SeriesEvery = time.Minute
	}
	return o
}

// Sample is one point of a run's time series.
type Sample struct {
	At          time.Duration
	Nodes       int
	PendingPods int
	// DemandCPU is the CPU cores requested by the pods alive (bound or not).
	DemandCPU float64
	// HourlyCost of the nodes there are.
	HourlyCost float64
	// IntegralCost is, for the LP bound, the hourly cost of the integral
	// packing it found that minute.
	IntegralCost float64
}

// Run is what happened to one policy on one trace.
type Run struct {
	Policy string
	Trace  string
	// Fingerprint digests the trace the run replayed; runs compared in
	// one table must share it.
	Fingerprint string
	Span        time.Duration
	NodeHours   float64
	Cost        float64
	ScaleUps    int
	ScaleDowns  int
	// BusyRemovals are nodes removed while above the idle thresholds.
	BusyRemovals int
	Evictions    int
	// Stranded are evicted pods that found no room on the nodes that stayed.
	Stranded int
	// Interruptions are spot nodes taken back (Options.Spot); Disrupted
	// the pods they held, evicted on the notice.
	Interruptions, Disrupted int
	// Replacements are nodes (one or several at once) replaced by one new node.
	Replacements int
	NodesAdded   int
	NodesRemoved int
	// Waits is each schedulable pod's total pending time; Unfit counts the
	// pods no size holds (left out of Waits); StillPending those waiting at the end.
	Waits        []time.Duration
	Unfit        int
	StillPending int
	Series       []Sample
	// Spend is where the node-hours went (simulated runs only).
	Spend Spend
	// LP says how the LP bound's column generation went (LPBound only).
	LP      *LPStats
	Elapsed time.Duration
}

// Simulate replays tr against ctl on a cluster that starts with floor ready
// nodes of the cheapest size without GPUs (every policy starts the same).
func Simulate(tr Trace, catalog []types.InstanceType, pool types.Policy, ctl Controller, opt Options) (Run, error) {
	if err := tr.Validate(); err != nil {
		return Run{}, err
	}
	if len(catalog) == 0 {
		return Run{}, errors.New("catalog is empty")
	}
	opt = opt.withDefaults()
	start := time.Now()
	var spot *spotState
	if opt.Spot != nil {
		s := opt.Spot.withDefaults()
		catalog, spot = SpotPrices(catalog, s.PriceFactor), newSpotState(s)
	}
	c := newCluster(tr.Pods, catalog, opt.ProvisioningDelay, pool.MaxNodes, pool)
	c.spot = spot
	c.watch = opt.WatchEvents
	if floor := cheapestCPU(catalog); floor.Name != "" {
		for range pool.MinNodes {
			c.addNode(floor, 0)
		}
	}
	departures := make([]int, len(tr.Pods))
	for i := range departures {
		departures[i] = i
	}
	slices.SortStableFunc(departures, func(a, b int) int { return int(tr.Pods[a].Depart - tr.Pods[b].Depart) })
	span := tr.Span()
	run := Run{Policy: ctl.Name(), Trace: tr.Name, Fingerprint: tr.Fingerprint(), Span: span}
	next, gone := 0, 0
	var nextSample time.Duration
	for c.now = 0; c.now <= span; c.now += opt.Tick {
		for gone < len(departures) && tr.Pods[departures[gone]].Depart <= c.now {
			c.depart(departures[gone])
			gone++
		}
		for next < len(tr.Pods) && tr.Pods[next].Arrive <= c.now {
			if tr.Pods[next].Depart > c.now {
				c.arrive(next)
			}
			next++
		}
		for _, nd := range c.nodes {
			if !nd.ready && nd.readyAt <= c.now {
				nd.ready, c.dirty, c.gen = true, true, c.gen+1
			}
		}
		c.interrupt()
		if err := c.completeReplacements(); err != nil {
			return Run{}, fmt.Errorf("%s at %s: %w", ctl.Name(), c.now, err)
		}
		c.schedule()
		if err := ctl.Step(c); err != nil {
			return Run{}, fmt.Errorf("%s at %s: %w", ctl.Name(), c.now, err)
		}
		c.schedule()
		if c.now < span {
			c.account(&run.Spend, min(opt.Tick, span-c.now), pool.MinNodes)
		}
		if c.now >= nextSample {
			run.Series = append(run.Series, c.sample())
			nextSample += opt.SeriesEvery
		}
	}
	c.now = span
	for _, nd := range slices.Clone(c.nodes) {
		c.retire(nd)
	}
	for _, i := range c.pending {
		if c.pods[i].fits {
			c.endWait(i)
			run.StillPending++
		}
	}
	for i, s := range c.pods {
		if !s.fits {
			run.Unfit++
			continue
		}
		_ = i
		run.Waits = append(run.Waits, s.waited)
	}
	st := c.stats
	run.NodeHours, run.Cost = st.nodeSeconds/3600, st.cost
	run.ScaleUps, run.ScaleDowns = st.scaleUps, st.scaleDowns
	run.NodesAdded, run.NodesRemoved = st.nodesAdded, st.nodesRemoved
	run.BusyRemovals, run.Evictions, run.Stranded, run.Replacements = st.busyRemovals, st.evictions, st.stranded, st.replacements
	run.Interruptions, run.Disrupted = st.interruptions, st.disrupted
	run.Elapsed = time.Since(start)
	return run, nil
}

func (c *Cluster) sample() Sample {
	s := Sample{At: c.now, Nodes: len(c.nodes), PendingPods: len(c.pending)}
	for _, nd := range c.nodes {
		s.DemandCPU += float64(nd.requested.MilliCPU) / 1000
		s.HourlyCost += nd.t.HourlyPrice
	}
	for _, i := range c.pending {
		s.DemandCPU += float64(c.trace[i].Requests.MilliCPU) / 1000
	}
	return s
}

// cheapestCPU is the lowest-priced size without GPUs, as the floor buys.
func cheapestCPU(catalog []types.InstanceType) types.InstanceType {
	var best types.InstanceType
	for _, t := range catalog {
		if t.GPUs > 0 {
			continue
		}
		if best.Name == "" || t.HourlyPrice < best.HourlyPrice || (t.HourlyPrice == best.HourlyPrice && t.Name < best.Name) {
			best = t
		}
	}
	return best
}
