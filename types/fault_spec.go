package types

import (
	"fmt"
	"strings"
)

// FaultSpec is the provider fault injection of a simulated cluster as a
// spec file or a worker's clusters file writes it: JSON names, durations as
// "2s" (docs/faults.md). The zero value injects nothing. It lives here, not
// in the sim, so that clients validating a spec file link no simulator;
// connectors/sim turns it into its FaultConfig (sim.FaultsFromSpec).
type FaultSpec struct {
	RetryableRate             float64  `json:"retryableRate,omitempty"`
	RateLimitRate             float64  `json:"rateLimitRate,omitempty"`
	RetryAfter                Duration `json:"retryAfter,omitempty"`
	InsufficientCapacitySizes []string `json:"insufficientCapacitySizes,omitempty"`
	// SoldOutOfferings are offerings (size/zone/capacity type, as
	// types.Offering.Key spells them; an empty zone is every zone) that
	// fail InsufficientCapacity like a sold-out size.
	SoldOutOfferings            []string `json:"soldOutOfferings,omitempty"`
	CreateSucceedsButErrorsRate float64  `json:"createSucceedsButErrorsRate,omitempty"`
	NeverJoinsRate              float64  `json:"neverJoinsRate,omitempty"`
	GoesNotReadyRate            float64  `json:"goesNotReadyRate,omitempty"`
	TerminatedRate              float64  `json:"terminatedRate,omitempty"`
	FaultAfter                  Duration `json:"faultAfter,omitempty"`
	LeakRate                    float64  `json:"leakRate,omitempty"`
	SpotInterruptionRate        float64  `json:"spotInterruptionRate,omitempty"`
	InterruptionNotice          Duration `json:"interruptionNotice,omitempty"`
	CallLatency                 Duration `json:"callLatency,omitempty"`
	CallLatencyJitter           Duration `json:"callLatencyJitter,omitempty"`
}

// FieldProblem is one bad setting: the field as its reader spells it and
// what is wrong with it.
type FieldProblem struct{ Field, Message string }

// Problems checks the spec before any fleet exists, naming each bad field
// as the file spells it ("leakRate"). Sizes are checked against the
// catalog later, when the fleet is built.
func (s FaultSpec) Problems() []FieldProblem { return s.Check(nil, JSONFieldName) }

// JSONFieldName is how a spec file spells a Go field name.
func JSONFieldName(goName string) string { return strings.ToLower(goName[:1]) + goName[1:] }

// Check reports every bad setting, each field named by name(Go field
// name). A nil sizes set skips checking InsufficientCapacitySizes against
// the catalog (not known yet).
func (s FaultSpec) Check(sizes map[string]bool, name func(goName string) string) []FieldProblem {
	var out []FieldProblem
	add := func(goName, format string, args ...any) {
		out = append(out, FieldProblem{Field: name(goName), Message: fmt.Sprintf(format, args...)})
	}
	for _, r := range []struct {
		field string
		v     float64
	}{
		{"RetryableRate", s.RetryableRate},
		{"RateLimitRate", s.RateLimitRate},
		{"CreateSucceedsButErrorsRate", s.CreateSucceedsButErrorsRate},
		{"NeverJoinsRate", s.NeverJoinsRate},
		{"GoesNotReadyRate", s.GoesNotReadyRate},
		{"TerminatedRate", s.TerminatedRate},
		{"LeakRate", s.LeakRate},
	} {
		if r.v < 0 || r.v > 1 {
			add(r.field, "must be within [0, 1], got %v", r.v)
		}
	}
	if sum := s.RetryableRate + s.RateLimitRate; sum > 1 {
		add("RetryableRate", "%s + %s must not exceed 1, got %v", name("RetryableRate"), name("RateLimitRate"), sum)
	}
	if sum := s.NeverJoinsRate + s.GoesNotReadyRate + s.TerminatedRate; sum > 1 {
		add("NeverJoinsRate", "%s + %s + %s must not exceed 1 (one fate per machine), got %v",
			name("NeverJoinsRate"), name("GoesNotReadyRate"), name("TerminatedRate"), sum)
	}
	// A rate past one an hour a minute is no spot market, a typo.
	if s.SpotInterruptionRate < 0 || s.SpotInterruptionRate > 60 {
		add("SpotInterruptionRate", "must be within [0, 60] per machine-hour, got %v", s.SpotInterruptionRate)
	}
	for _, d := range []struct {
		field string
		v     Duration
	}{
		{"RetryAfter", s.RetryAfter},
		{"FaultAfter", s.FaultAfter},
		{"InterruptionNotice", s.InterruptionNotice},
		{"CallLatency", s.CallLatency},
		{"CallLatencyJitter", s.CallLatencyJitter},
	} {
		if d.v < 0 {
			add(d.field, "must not be negative, got %s", d.v.D())
		}
	}
	for _, k := range s.SoldOutOfferings {
		size, rest, ok := strings.Cut(k, "/")
		_, ct, ok2 := strings.Cut(rest, "/")
		_, ctErr := ParseCapacityType(ct)
		switch {
		case !ok || !ok2 || size == "" || ct == "" || ctErr != nil:
			add("SoldOutOfferings", "%q: want size/zone/capacity-type, e.g. sim-4c8g/sim-a/spot (zone may be empty: every zone)", k)
		case sizes != nil && !sizes[size]:
			add("SoldOutOfferings", "%q: size %q is not in the catalog", k, size)
		}
	}
	if sizes != nil {
		for _, sz := range s.InsufficientCapacitySizes {
			if !sizes[sz] {
				add("InsufficientCapacitySizes", "%q is not in the catalog", sz)
			}
		}
	}
	return out
}
