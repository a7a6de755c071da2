package types

import (
	"strings"
	"testing"
)

func TestFaultSpecCheckNamesEveryBadFieldAsItsReaderSpellsIt(t *testing.T) {
	if p := (FaultSpec{}).Problems(); len(p) != 0 {
		t.Fatalf("the zero spec is off and valid: %v", p)
	}
	bad := FaultSpec{LeakRate: 2, RetryableRate: 0.7, RateLimitRate: 0.7, NeverJoinsRate: 0.6, GoesNotReadyRate: 0.6,
		CallLatency: -1, InsufficientCapacitySizes: []string{"sim-2c4g", "huge"}}
	fields := map[string]string{}
	for _, p := range bad.Problems() {
		fields[p.Field] = p.Message
	}
	for field, want := range map[string]string{
		"leakRate":       "within [0, 1], got 2",
		"retryableRate":  "retryableRate + rateLimitRate must not exceed 1",
		"neverJoinsRate": "neverJoinsRate + goesNotReadyRate + terminatedRate must not exceed 1",
		"callLatency":    "must not be negative",
	} {
		if !strings.Contains(fields[field], want) {
			t.Errorf("%s: %q, want it to contain %q", field, fields[field], want)
		}
	}
	if len(fields) != 4 {
		t.Errorf("sizes are not checked without a catalog: %v", fields)
	}

	goNamed := bad.Check(map[string]bool{"sim-2c4g": true}, func(goName string) string { return goName })
	var sizes []string
	for _, p := range goNamed {
		if p.Field == "InsufficientCapacitySizes" {
			sizes = append(sizes, p.Message)
		}
	}
	if len(sizes) != 1 || !strings.Contains(sizes[0], `"huge" is not in the catalog`) {
		t.Errorf("catalog check: %v", sizes)
	}
}
