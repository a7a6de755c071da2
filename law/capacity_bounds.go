package law

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Bounds are the pool's floor and ceiling at one moment, after its
// capacity windows.
type Bounds struct {
	MinNodes int `json:"minNodes"`
	MaxNodes int `json:"maxNodes"`
	// FloorWindow and CeilingWindow name the windows that set them
	// ("capacityWindows[0] \"office hours\""); empty when the policy's own
	// minNodes / maxNodes hold.
	FloorWindow   string `json:"floorWindow,omitempty"`
	CeilingWindow string `json:"ceilingWindow,omitempty"`
	// Prescaling: the floor is a window's that opens within the policy's
	// provisioning delay, raised early so the nodes are Ready on time.
	Prescaling bool `json:"prescaling,omitempty"`
	// CeilingRaised: overlapping windows asked for a ceiling below the
	// floor; the floor wins (capacity before savings) and the ceiling is
	// raised to it.
	CeilingRaised bool `json:"ceilingRaised,omitempty"`
}

// capacityWindows compiles the policy's windows, skipping any that do not
// compile (Validate refuses such a policy).
func capacityWindows(p types.Policy) ([]window, []types.CapacityWindow) {
	lead := p.EffectiveProvisioningDelay()
	ws := make([]window, 0, len(p.CapacityWindows))
	specs := make([]types.CapacityWindow, 0, len(p.CapacityWindows))
	for i, cw := range p.CapacityWindows {
		w, err := compileWindow(fmt.Sprintf("capacityWindows[%d]", i), cw.Name, cw.Schedule, cw.TimeZone, cw.Duration.D(), lead)
		if err != nil {
			continue
		}
		ws, specs = append(ws, w), append(specs, cw)
	}
	return ws, specs
}

// EffectiveBounds is the floor and ceiling at now: the policy's
// minNodes / maxNodes, raised to the largest minNodes of every window open
// or opening within the provisioning delay, and lowered to the smallest
// maxNodes of every window open now. Windows without a maxNodes leave the
// ceiling alone.
func EffectiveBounds(p types.Policy, now time.Time) Bounds {
	ws, specs := capacityWindows(p)
	return boundsAt(p, ws, specs, now)
}

func boundsAt(p types.Policy, ws []window, specs []types.CapacityWindow, now time.Time) Bounds {
	b := Bounds{MinNodes: p.MinNodes, MaxNodes: p.MaxNodes}
	floorOpen := true
	for i, w := range ws {
		spec := specs[i]
		open := w.open(now)
		if open && spec.MaxNodes > 0 && spec.MaxNodes < b.MaxNodes {
			b.MaxNodes, b.CeilingWindow = spec.MaxNodes, w.label
		}
		if spec.MinNodes <= 0 || !w.early(now) {
			continue
		}
		// A window already open wins a tie over one still pre-scaling.
		if spec.MinNodes > b.MinNodes || (spec.MinNodes == b.MinNodes && b.FloorWindow != "" && open && !floorOpen) {
			b.MinNodes, b.FloorWindow, floorOpen = spec.MinNodes, w.label, open
		}
	}
	b.Prescaling = b.FloorWindow != "" && !floorOpen
	if b.MaxNodes < b.MinNodes {
		b.MaxNodes, b.CeilingRaised = b.MinNodes, true
	}
	return b
}

// NextChange is the first moment after now at which EffectiveBounds
// differs from its value at now (a pre-scale start, a window opening or
// closing), for the pool's timer. Zero when no window fires again. When
// the next change lies beyond a long walk of edges that change nothing,
// it returns the last edge walked: waking there and asking again is safe.
func NextChange(p types.Policy, now time.Time) time.Time {
	ws, specs := capacityWindows(p)
	return nextChange(ws, now, func(t time.Time) Bounds { return boundsAt(p, ws, specs, t) })
}
