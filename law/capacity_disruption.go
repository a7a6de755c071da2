package law

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// ScaleDownVerdict says whether the disruption windows let scale-down run
// at now, and until when that holds.
type ScaleDownVerdict struct {
	Allowed bool `json:"allowed"`
	// Until is the next moment the answer flips; zero when it never does
	// (no windows, or none fires again).
	Until time.Time `json:"until,omitempty"`
	// Reason names the window that forbids it, or says no allowed window
	// is open; empty when allowed.
	Reason string `json:"reason,omitempty"`
}

type scaleDownState struct {
	allowed bool
	reason  string
}

// ScaleDownAllowed applies the policy's disruption windows at now: inside
// a forbidden window scale-down waits; with any allowed window it runs
// only inside one. Without windows it is always allowed.
func ScaleDownAllowed(p types.Policy, now time.Time) ScaleDownVerdict {
	if p.Disruption == nil || len(p.Disruption.Windows) == 0 {
		return ScaleDownVerdict{Allowed: true}
	}
	var allowed, forbidden []window
	for i, dw := range p.Disruption.Windows {
		w, err := compileWindow(fmt.Sprintf("disruption.windows[%d]", i), dw.Name, dw.Schedule, dw.TimeZone, dw.Duration.D(), 0)
		if err != nil {
			continue
		}
		switch dw.ScaleDown {
		case types.ScaleDownAllowed:
			allowed = append(allowed, w)
		case types.ScaleDownForbidden:
			forbidden = append(forbidden, w)
		}
	}
	state := func(t time.Time) scaleDownState {
		for _, w := range forbidden {
			if w.open(t) {
				return scaleDownState{reason: "scale-down forbidden by " + w.label}
			}
		}
		if len(allowed) == 0 {
			return scaleDownState{allowed: true}
		}
		for _, w := range allowed {
			if w.open(t) {
				return scaleDownState{allowed: true}
			}
		}
		return scaleDownState{reason: "scale-down waits for an allowed disruption window"}
	}
	s := state(now)
	// Only the answer matters for the timer, not which window gives it.
	until := nextChange(append(allowed, forbidden...), now, func(t time.Time) bool { return state(t).allowed })
	return ScaleDownVerdict{Allowed: s.allowed, Until: until, Reason: s.reason}
}

// MaxDraining is how many of the pool's nodes may be draining at once
// under its disruption budget: the smaller of maxDrainingNodes and
// maxDrainingPercent of poolNodes (rounded up, so a non-zero percent of a
// non-empty pool allows at least one). Without a budget it is poolNodes.
func MaxDraining(p types.Policy, poolNodes int) int {
	limit := max(poolNodes, 0)
	if p.Disruption == nil {
		return limit
	}
	if n := p.Disruption.MaxDrainingNodes; n > 0 {
		limit = min(limit, n)
	}
	if pct := p.Disruption.MaxDrainingPercent; pct > 0 {
		limit = min(limit, (max(poolNodes, 0)*pct+99)/100)
	}
	return limit
}

// DrainSlots is how many more nodes may start draining now, given how
// many already are: never negative.
func DrainSlots(p types.Policy, poolNodes, draining int) int {
	return max(MaxDraining(p, poolNodes)-max(draining, 0), 0)
}
