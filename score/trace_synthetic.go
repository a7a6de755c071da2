package score

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Synthetic traces are deterministic for a seed, so a report can be
// regenerated exactly. Each is a stream of pods of a few web-service-like
// shapes whose arrival rate follows a curve over the span.

// syntheticShapes are the requests synthetic pods draw from.
var syntheticShapes = []types.Resources{
	{MilliCPU: 250, Memory: 512 * types.MiB, Pods: 1},
	{MilliCPU: 500, Memory: 1 * types.GiB, Pods: 1},
	{MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1},
	{MilliCPU: 2000, Memory: 4 * types.GiB, Pods: 1},
	{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 1},
}

// poisson draws pods with arrival rate rate(t) per minute (thinning), each
// living an exponential time of mean meanLife.
func poisson(name string, span, meanLife time.Duration, peakRate float64, rate func(t time.Duration) float64, seed uint64) Trace {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	tr := Trace{Name: name, Source: fmt.Sprintf("synthetic %s, seed %d, span %s, mean lifetime %s", name, seed, span, meanLife)}
	t := time.Duration(0)
	for i := 0; ; {
		t += time.Duration(rng.ExpFloat64() / peakRate * float64(time.Minute))
		if t >= span {
			break
		}
		if rng.Float64()*peakRate > rate(t) {
			continue
		}
		life := time.Duration(rng.ExpFloat64()*float64(meanLife)) + time.Minute
		tr.Pods = append(tr.Pods, Pod{
			Name:     fmt.Sprintf("%s-%06d", name, i),
			Requests: syntheticShapes[rng.IntN(len(syntheticShapes))],
			Arrive:   t.Round(time.Second),
			Depart:   (t + life).Round(time.Second),
		})
		i++
	}
	return tr
}

// Diurnal: arrivals swing between low and high once a day (trough at
// midnight, peak at noon).
func Diurnal(span time.Duration, low, high float64, meanLife time.Duration, seed uint64) Trace {
	return poisson("diurnal", span, meanLife, high, func(t time.Duration) float64 {
		phase := 2 * math.Pi * t.Hours() / 24
		return low + (high-low)*(1-math.Cos(phase))/2
	}, seed)
}

// Bursty: a base arrival rate with a burst of burstRate for burstFor at the
// start of every period.
func Bursty(span time.Duration, base, burstRate float64, period, burstFor, meanLife time.Duration, seed uint64) Trace {
	return poisson("bursty", span, meanLife, max(base, burstRate), func(t time.Duration) float64 {
		if t%period < burstFor {
			return burstRate
		}
		return base
	}, seed)
}

// Step: the arrival rate steps through levels, each held for span/len(levels).
func Step(span time.Duration, levels []float64, meanLife time.Duration, seed uint64) Trace {
	peak := 0.0
	for _, l := range levels {
		peak = max(peak, l)
	}
	each := span / time.Duration(len(levels))
	return poisson("step", span, meanLife, peak, func(t time.Duration) float64 {
		return levels[min(int(t/each), len(levels)-1)]
	}, seed)
}
