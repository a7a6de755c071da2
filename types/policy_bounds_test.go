package types

import (
	"strings"
	"testing"
	"time"
)

func TestPolicyBoundsRefuseOverflowAndRunaways(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*Policy)
		want   string
	}{
		"huge sample interval":    {func(p *Policy) { p.SampleInterval = Duration(2562047 * time.Hour) }, "policy.sampleInterval: must be at most 24h0m0s"},
		"huge resync":             {func(p *Policy) { p.ResyncInterval = Duration(2562047 * time.Hour) }, "policy.resyncInterval: must be at most"},
		"billion nodes":           {func(p *Policy) { p.MaxNodes = 1e9 }, "policy.maxNodes: must be at most 10000"},
		"long idle window":        {func(p *Policy) { p.IdleWindow = Duration(400 * 24 * time.Hour) }, "policy.idleWindow: must be at most"},
		"bad fraction":            {func(p *Policy) { p.MaxUnreadyFraction = 1.5 }, "policy.maxUnreadyFraction"},
		"negative provision":      {func(p *Policy) { p.ProvisionTimeout = Duration(-time.Second) }, "policy.provisionTimeout: must not be negative"},
		"identity label":          {func(p *Policy) { p.NodeLabels = map[string]string{LabelOrg: "evil"} }, `policy.nodeLabels["hanzo.ai/org"]: is the pool's identity label`},
		"bad label":               {func(p *Policy) { p.NodeLabels = map[string]string{"disk type": "nvme"} }, `policy.nodeLabels["disk type"]`},
		"consolidation above 1":   {func(p *Policy) { p.ConsolidationThreshold = 1.2 }, "policy.consolidationThreshold: must be within (0, 1]"},
		"negative consolidation":  {func(p *Policy) { p.ConsolidationThreshold = -0.1 }, "policy.consolidationThreshold"},
		"long consolidate window": {func(p *Policy) { p.ConsolidateAfter = Duration(8 * 24 * time.Hour) }, "policy.consolidateAfter: must be at most"},
		"unknown objective":       {func(p *Policy) { p.SizingObjective = "speed" }, `policy.sizingObjective: must be "cost" or "nodes" (empty: "cost"), got "speed"`},
		"unknown disruption":      {func(p *Policy) { p.ConsolidationDisruption = "sometimes" }, `policy.consolidationDisruption: must be "idle-only", "balanced" or "always" (empty: "always"), got "sometimes"`},
		"bad taint effect":        {func(p *Policy) { p.NodeTaints = []Taint{{Key: "gpu", Effect: "Sometimes"}} }, `policy.nodeTaints[0].effect "Sometimes"`},
	} {
		p := DefaultPolicy()
		tc.mutate(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, tc.want)
		}
	}
	ok := DefaultPolicy()
	ok.NodeLabels = map[string]string{"disktype": "nvme"}
	ok.NodeTaints = []Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}}
	ok.SizingObjective = SizingNodes
	if err := ok.Validate(); err != nil {
		t.Fatalf("a sane template is valid: %v", err)
	}
	if ok.EffectiveProvisionTimeout() != DefaultProvisionTimeout || ok.EffectiveUnreadyTimeout() != DefaultUnreadyTimeout {
		t.Fatal("zero timeouts must read as the defaults")
	}
	if on, th, after := ok.EffectiveConsolidation(); !on || th != WrittenConsolidationThreshold || after != WrittenConsolidateAfter {
		t.Fatalf("written consolidation fields read as %v %v %s, want what DefaultPolicy writes", on, th, after)
	}
	ok.ConsolidationThreshold, ok.ConsolidateAfter = 0, 0
	if on, th, after := ok.EffectiveConsolidation(); !on || th != DefaultConsolidationThreshold || after != DefaultConsolidateAfter {
		t.Fatalf("zero consolidation fields read as %v %v %s, want the defaults", on, th, after)
	}
	// The longest valid resync plus the longest sample cannot overflow.
	worst := DefaultPolicy()
	worst.SampleInterval, worst.ResyncInterval = Duration(MaxSampleInterval), Duration(MaxSampleInterval)
	if err := worst.Validate(); err != nil || worst.ResyncInterval.D()+worst.SampleInterval.D() <= 0 {
		t.Fatalf("bounded intervals: %v", err)
	}
}
