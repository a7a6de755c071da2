package law

import (
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Status is the capacity policies' part of a pool's status (the status
// query, the Web UI details, `visor pool describe`): what holds now, and
// until when.
type Status struct {
	Bounds Bounds `json:"bounds"`
	// NextChange is when Bounds next change; zero if never.
	NextChange time.Time        `json:"nextChange,omitempty"`
	ScaleDown  ScaleDownVerdict `json:"scaleDown"`
	// MaxDraining is the disruption budget in nodes for the pool's size.
	MaxDraining int `json:"maxDraining"`
	// HeadroomPods is how many virtual pods the headroom adds.
	HeadroomPods int `json:"headroomPods,omitempty"`
	// HourlyCost is what the pool's nodes cost per hour now; Budget is the
	// pool's budget checked with nothing more bought (its Room is what is
	// left per hour).
	HourlyCost float64       `json:"hourlyCost"`
	Budget     BudgetVerdict `json:"budget"`
}

// Describe gathers Status for a pool of poolNodes nodes spending
// spendPerHour (its billed nodes at their prices) at now.
func Describe(p types.Policy, now time.Time, poolNodes int, spendPerHour float64) Status {
	headroom := 0
	for _, h := range p.Headroom {
		headroom += h.Pods
	}
	return Status{
		Bounds:       EffectiveBounds(p, now),
		NextChange:   NextChange(p, now),
		ScaleDown:    ScaleDownAllowed(p, now),
		MaxDraining:  MaxDraining(p, poolNodes),
		HeadroomPods: min(headroom, types.MaxHeadroomPods),
		HourlyCost:   spendPerHour,
		Budget:       WithinBudget(0, p.MaxHourlyCost, spendPerHour),
	}
}

// Summary is Status in one line for the Web UI details; empty when the
// pool uses no capacity policy.
func (s Status) Summary(p types.Policy) string {
	var parts []string
	if len(p.CapacityWindows) > 0 {
		b := s.Bounds
		part := fmt.Sprintf("bounds %d–%d", b.MinNodes, b.MaxNodes)
		if b.FloorWindow != "" {
			part += " (floor from " + b.FloorWindow
			if b.Prescaling {
				part += ", pre-scaling"
			}
			part += ")"
		}
		if b.CeilingWindow != "" {
			part += " (ceiling from " + b.CeilingWindow + ")"
		}
		if !s.NextChange.IsZero() {
			part += " until " + s.NextChange.UTC().Format(time.RFC3339)
		}
		parts = append(parts, part)
	}
	if s.HeadroomPods > 0 {
		parts = append(parts, fmt.Sprintf("headroom %d pods", s.HeadroomPods))
	}
	if !s.Budget.Unlimited {
		parts = append(parts, fmt.Sprintf("spend $%.4f of $%.4f/h", s.HourlyCost, p.MaxHourlyCost))
	}
	if p.Disruption != nil {
		part := fmt.Sprintf("drain ≤ %d at once", s.MaxDraining)
		if !s.ScaleDown.Allowed {
			part += "; " + s.ScaleDown.Reason
		}
		if !s.ScaleDown.Until.IsZero() {
			part += " until " + s.ScaleDown.Until.UTC().Format(time.RFC3339)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}
