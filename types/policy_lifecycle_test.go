package types

import (
	"strings"
	"testing"
	"time"
)

func TestLifecycleDefaultsAndValidation(t *testing.T) {
	if got := DefaultPolicy().ExpireAfter.D(); got != DefaultExpireAfter {
		t.Fatalf("DefaultPolicy expireAfter %s, want %s", got, DefaultExpireAfter)
	}
	// A written policy that leaves it out gets the default; one that
	// writes 0s keeps expiry off.
	if got := (Policy{MaxNodes: 3}).WithDefaultsExcept(map[string]bool{"maxnodes": true}).ExpireAfter.D(); got != DefaultExpireAfter {
		t.Errorf("unwritten expireAfter became %s, want %s", got, DefaultExpireAfter)
	}
	if got := (Policy{MaxNodes: 3}).WithDefaultsExcept(map[string]bool{"maxnodes": true, "expireafter": true}).ExpireAfter; got != 0 {
		t.Errorf("written expireAfter 0 became %s, want 0 (off)", got.D())
	}
	for _, c := range []struct {
		field string
		set   func(*Policy)
	}{
		{"policy.expireAfter", func(p *Policy) { p.ExpireAfter = Duration(-time.Hour) }},
		{"policy.expireAfter", func(p *Policy) { p.ExpireAfter = Duration(MaxExpireAfter + time.Hour) }},
		{"policy.terminationGracePeriod", func(p *Policy) { p.TerminationGracePeriod = Duration(-time.Second) }},
		{"policy.terminationGracePeriod", func(p *Policy) { p.TerminationGracePeriod = Duration(MaxPolicyDuration + time.Hour) }},
	} {
		p := DefaultPolicy()
		c.set(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("got %v, want an error naming %s", err, c.field)
		}
	}
	p := DefaultPolicy()
	p.ExpireAfter, p.TerminationGracePeriod = Duration(MaxExpireAfter), Duration(time.Hour)
	if err := p.Validate(); err != nil {
		t.Errorf("valid lifecycle refused: %v", err)
	}
}

func TestOfferingAllowed(t *testing.T) {
	p := Policy{}
	if !p.SizeAllowed("any") || !p.CapacityTypeAllowed("") || p.CapacityTypeAllowed(CapacitySpot) || !p.ZoneAllowed("z9") {
		t.Error("empty policy: every size, on demand only, every zone")
	}
	p = Policy{AllowedSizes: []string{"a"}, CapacityTypes: []CapacityType{CapacitySpot}, Zones: []string{"z1"}}
	if p.SizeAllowed("b") || !p.SizeAllowed("a") || p.CapacityTypeAllowed(CapacityOnDemand) || !p.CapacityTypeAllowed(CapacitySpot) || p.ZoneAllowed("z2") || !p.ZoneAllowed("") {
		t.Error("restricted policy allows the wrong offerings")
	}
}
