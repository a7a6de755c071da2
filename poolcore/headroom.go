package poolcore

import (
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// Buffered reports whether the last observation carries a CapacityBuffer
// that keeps room (fold keeps buffers only under Rules.Buffers).
func (s *State) Buffered() bool {
	if s.Observation == nil {
		return false
	}
	for _, b := range s.Observation.Buffers {
		if b.Pods > 0 {
			return true
		}
	}
	return false
}

// WithBuffers adds the observed CapacityBuffers to the capacity summary:
// the pods they keep room for, and each one's error (a bad buffer adds
// nothing and says why here and in the buffer's own status).
func WithBuffers(summary string, obs *types.PoolObservation) string {
	if obs == nil || len(obs.Buffers) == 0 {
		return summary
	}
	pods := 0
	var bad []string
	for _, b := range obs.Buffers {
		pods += b.Pods
		if b.Error != "" {
			bad = append(bad, fmt.Sprintf("buffer %s: %s", b.Key(), b.Error))
		}
	}
	parts := []string{fmt.Sprintf("buffers %d pods (%d CapacityBuffers)", pods, len(obs.Buffers))}
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more with errors", len(bad)-3))
	}
	parts = append(parts, bad...)
	if summary != "" {
		parts = append([]string{summary}, parts...)
	}
	return strings.Join(parts, "; ")
}

// OldestPendingAge is how long the longest-waiting pending pod of the last
// observation has waited by now; 0 with none.
func (s *State) OldestPendingAge(now time.Time) time.Duration {
	if s.Observation == nil {
		return 0
	}
	var oldest time.Time
	older := func(t time.Time) {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	for _, pod := range s.Observation.PendingPods {
		older(pod.UnschedulableSince)
	}
	for _, sh := range s.Observation.PendingShapes {
		older(sh.OldestSince)
	}
	if oldest.IsZero() || now.Before(oldest) {
		return 0
	}
	return now.Sub(oldest)
}

// HeldScaleUp is the outcome of the newest scale-up when it bought nothing
// and pods are still pending, else "".
func (s *State) HeldScaleUp() string {
	if s.Observation == nil || s.Observation.PendingCount() == 0 {
		return ""
	}
	for i := len(s.Decisions) - 1; i >= 0; i-- {
		d := s.Decisions[i]
		if d.Action != string(law.ActionScaleUp) && d.Action != ActionManualScaleUp {
			continue
		}
		if d.Added == 0 && (strings.HasPrefix(d.Outcome, OutcomeNothingBought) || strings.HasPrefix(d.Outcome, OutcomeNothingToAdd)) {
			return d.Outcome
		}
		return ""
	}
	return ""
}

// withHeadroom tells the law which headroom pods (the policy's and the
// observed CapacityBuffers') the pool has no room for now, and lets
// scale-down check that removing nodes keeps the room. The check runs the
// planner's scheduling rules over the Ready and booting nodes; it is pure,
// so it may run in workflow code.
func (s *State) withHeadroom(in *law.DecisionInput, key types.PoolKey, now time.Time) {
	nodes := s.HeadroomNodes(now)
	tmpl := sizing.TemplateOptions{Labels: s.Policy.NodeLabels, Taints: s.Policy.NodeTaints, Region: s.Gate.Region, PoolLabels: key.NodeLabels()}
	pods := law.HeadroomPods(s.Policy, key)
	if s.Observation != nil {
		// Empty unless poolcore.Rules.Buffers: fold drops them otherwise.
		pods = append(pods, law.BufferPods(s.Observation.Buffers, key)...)
	}
	for _, pod := range law.ShortfallOf(pods, nodes, nil, tmpl) {
		if _, never := s.Unplaceable[pod.Key()]; !never {
			in.HeadroomShort = append(in.HeadroomShort, pod)
		}
	}
	in.KeepsHeadroom = func(remove []string) (bool, string) {
		return law.KeepsRoomFor(pods, nodes, remove, nil, tmpl)
	}
}
