package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// maxPodsPerPool keeps a mistyped profile from flooding the fake API.
const maxPodsPerPool = 2000

// Shape is a demand profile's form over time.
type Shape string

const (
	// ShapeSteady is a constant Pods.
	ShapeSteady Shape = "steady"
	// ShapeDiurnal swings from Pods up to PeakPods and back once per
	// Period, starting at the trough.
	ShapeDiurnal Shape = "diurnal"
	// ShapeBurst holds Pods, adding BurstPods for BurstFor at the start of
	// every Period after the first.
	ShapeBurst Shape = "burst"
)

// DemandProfile says how many pods of what size a pool's workload runs at
// each moment after its demand started.
type DemandProfile struct {
	Shape Shape `json:"shape"`
	// Pods: the steady count, the diurnal trough, the burst baseline.
	Pods int `json:"pods"`
	// PeakPods is the diurnal crest.
	PeakPods int `json:"peakPods,omitempty"`
	// Period is the diurnal cycle, or the time from one burst to the next.
	Period types.Duration `json:"period,omitempty"`
	// BurstPods are added for BurstFor during a burst.
	BurstPods int            `json:"burstPods,omitempty"`
	BurstFor  types.Duration `json:"burstFor,omitempty"`
	// Requests is each pod's CPU, memory and GPUs (Pods is ignored).
	Requests types.Resources `json:"requests"`
}

// Steady runs n pods at all times.
func Steady(n int, requests types.Resources) DemandProfile {
	return DemandProfile{Shape: ShapeSteady, Pods: n, Requests: requests}
}

// Diurnal swings between low and high pods once per period.
func Diurnal(low, high int, period time.Duration, requests types.Resources) DemandProfile {
	return DemandProfile{Shape: ShapeDiurnal, Pods: low, PeakPods: high, Period: types.Duration(period), Requests: requests}
}

// Burst runs baseline pods plus extra for lasting, every period.
func Burst(baseline, extra int, every, lasting time.Duration, requests types.Resources) DemandProfile {
	return DemandProfile{
		Shape: ShapeBurst, Pods: baseline, BurstPods: extra,
		Period: types.Duration(every), BurstFor: types.Duration(lasting), Requests: requests,
	}
}

// Validate names every field that is wrong.
func (p DemandProfile) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("demand."+format, a...)) }
	if p.Pods < 0 {
		bad("pods must be >= 0, got %d", p.Pods)
	}
	if p.Requests.MilliCPU <= 0 || p.Requests.Memory <= 0 || p.Requests.GPUs < 0 {
		bad("requests must have positive milliCPU and memoryBytes, got %s", p.Requests)
	}
	switch p.Shape {
	case ShapeSteady:
	case ShapeDiurnal:
		if p.PeakPods < p.Pods {
			bad("peakPods %d is below pods %d", p.PeakPods, p.Pods)
		}
		if p.Period <= 0 {
			bad("period must be positive for a diurnal profile, got %s", p.Period)
		}
	case ShapeBurst:
		if p.BurstPods < 0 {
			bad("burstPods must be >= 0, got %d", p.BurstPods)
		}
		if p.Period <= 0 {
			bad("period must be positive for a burst profile, got %s", p.Period)
		}
		if p.BurstFor <= 0 || p.BurstFor > p.Period {
			bad("burstFor must be within (0, period %s], got %s", p.Period, p.BurstFor)
		}
	default:
		bad("shape %q is not one of steady, diurnal, burst", p.Shape)
	}
	if top := max(p.Pods, p.PeakPods, p.Pods+p.BurstPods); top > maxPodsPerPool {
		bad("asks for up to %d pods; the sim allows %d per pool", top, maxPodsPerPool)
	}
	return errors.Join(errs...)
}

// PodsAt is the pod count elapsed after the demand started.
func (p DemandProfile) PodsAt(elapsed time.Duration) int {
	elapsed = max(elapsed, 0)
	switch p.Shape {
	case ShapeDiurnal:
		phase := 2 * math.Pi * float64(elapsed%p.Period.D()) / float64(p.Period.D())
		return p.Pods + int(math.Round(float64(p.PeakPods-p.Pods)*(1-math.Cos(phase))/2))
	case ShapeBurst:
		if elapsed >= p.Period.D() && elapsed%p.Period.D() < p.BurstFor.D() {
			return p.Pods + p.BurstPods
		}
		return p.Pods
	default:
		return p.Pods
	}
}
