package types

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func capacityPolicy() Policy {
	p := DefaultPolicy()
	p.MinNodes, p.MaxNodes = 2, 20
	p.CapacityWindows = []CapacityWindow{{Name: "office", Schedule: "0 8 * * 1-5", TimeZone: "Europe/Berlin", Duration: Duration(11 * time.Hour), MinNodes: 10}}
	p.Headroom = []Headroom{{Pods: 2, Requests: Resources{MilliCPU: 500, Memory: GiB}}}
	p.MaxHourlyCost = 4.5
	p.Disruption = &DisruptionBudget{MaxDrainingPercent: 10, Windows: []DisruptionWindow{
		{Schedule: "@daily", Duration: Duration(6 * time.Hour), ScaleDown: ScaleDownAllowed},
	}}
	return p
}

func TestCapacityPolicyValidationNamesTheField(t *testing.T) {
	if err := capacityPolicy().Validate(); err != nil {
		t.Fatalf("the example is valid: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(*Policy)
		want   string
	}{
		"bad cron":        {func(p *Policy) { p.CapacityWindows[0].Schedule = "0 25 * * *" }, `policy.capacityWindows[0].schedule "0 25 * * *": `},
		"six fields":      {func(p *Policy) { p.CapacityWindows[0].Schedule = "0 0 8 * * 1-5" }, `policy.capacityWindows[0].schedule "0 0 8 * * 1-5"`},
		"empty cron":      {func(p *Policy) { p.CapacityWindows[0].Schedule = "" }, `policy.capacityWindows[0].schedule: is required`},
		"never fires":     {func(p *Policy) { p.CapacityWindows[0].Schedule = "0 8 30 2 *" }, `policy.capacityWindows[0].schedule "0 8 30 2 *": never fires`},
		"every":           {func(p *Policy) { p.CapacityWindows[0].Schedule = "@every 1h" }, `policy.capacityWindows[0].schedule: @every is an interval`},
		"tz prefix":       {func(p *Policy) { p.CapacityWindows[0].Schedule = "CRON_TZ=Asia/Tokyo 0 8 * * *" }, `policy.capacityWindows[0].schedule: give the zone in timeZone`},
		"bad zone":        {func(p *Policy) { p.CapacityWindows[0].TimeZone = "Mars/Olympus" }, `policy.capacityWindows[0].timeZone "Mars/Olympus": not a zone`},
		"local zone":      {func(p *Policy) { p.CapacityWindows[0].TimeZone = "Local" }, `policy.capacityWindows[0].timeZone "Local"`},
		"zero duration":   {func(p *Policy) { p.CapacityWindows[0].Duration = 0 }, `policy.capacityWindows[0].duration: must be above zero`},
		"long duration":   {func(p *Policy) { p.CapacityWindows[0].Duration = Duration(8 * 24 * time.Hour) }, `policy.capacityWindows[0].duration: must be at most`},
		"floor above max": {func(p *Policy) { p.CapacityWindows[0].MinNodes = 21 }, `policy.capacityWindows[0].minNodes: 21 is greater than the pool's maxNodes 20`},
		"window max high": {func(p *Policy) { p.CapacityWindows[0].MaxNodes = 30 }, `policy.capacityWindows[0].maxNodes: 30 is greater than the pool's maxNodes 20`},
		"window max low":  {func(p *Policy) { p.CapacityWindows[0].MaxNodes = 5 }, `policy.capacityWindows[0].maxNodes: 5 is less than the window's minNodes 10`},
		"below pool min":  {func(p *Policy) { p.CapacityWindows[0].MinNodes, p.CapacityWindows[0].MaxNodes = 0, 1 }, `policy.capacityWindows[0].maxNodes: 1 is less than the pool's minNodes 2`},
		"sets nothing":    {func(p *Policy) { p.CapacityWindows[0].MinNodes = 0 }, `policy.capacityWindows[0]: sets neither minNodes nor maxNodes`},
		"control name":    {func(p *Policy) { p.CapacityWindows[0].Name = "a\x1bb" }, `policy.capacityWindows[0].name: holds a control character`},
		"too many":        {func(p *Policy) { p.CapacityWindows = make([]CapacityWindow, MaxCapacityWindows+1) }, `policy.capacityWindows: lists 33 windows, at most 32`},
		"no headroom":     {func(p *Policy) { p.Headroom[0].Pods = 0 }, `policy.headroom[0].pods: must be within [1, 1000]`},
		"empty shape":     {func(p *Policy) { p.Headroom[0].Requests = Resources{} }, `policy.headroom[0].requests: asks for nothing`},
		"negative shape":  {func(p *Policy) { p.Headroom[0].Requests.Memory = -1 }, `policy.headroom[0].requests: must not be negative`},
		"bad selector":    {func(p *Policy) { p.Headroom[0].NodeSelector = map[string]string{"disk type": "x"} }, `policy.headroom[0].nodeSelector["disk type"]`},
		"bad toleration": {func(p *Policy) {
			p.Headroom[0].Tolerations = []corev1.Toleration{{Key: "gpu", Operator: "Maybe"}}
		}, `policy.headroom[0].tolerations[0].operator "Maybe"`},
		"headroom total": {func(p *Policy) {
			p.Headroom = []Headroom{{Pods: 600, Requests: Resources{MilliCPU: 1}}, {Pods: 600, Requests: Resources{MilliCPU: 1}}}
		}, `policy.headroom: adds 1200 pods in all, at most 1000`},
		"negative budget": {func(p *Policy) { p.MaxHourlyCost = -1 }, `policy.maxHourlyCost: must be within`},
		"drain percent":   {func(p *Policy) { p.Disruption.MaxDrainingPercent = 150 }, `policy.disruption.maxDrainingPercent: must be within [0, 100], got 150`},
		"drain nodes":     {func(p *Policy) { p.Disruption.MaxDrainingNodes = -1 }, `policy.disruption.maxDrainingNodes: must be within`},
		"disruption cron": {func(p *Policy) { p.Disruption.Windows[0].Schedule = "nightly" }, `policy.disruption.windows[0].schedule "nightly"`},
		"disruption zone": {func(p *Policy) { p.Disruption.Windows[0].TimeZone = "Europe/Atlantis" }, `policy.disruption.windows[0].timeZone "Europe/Atlantis"`},
		"disruption rule": {func(p *Policy) { p.Disruption.Windows[0].ScaleDown = "sometimes" }, `policy.disruption.windows[0].scaleDown: "sometimes" is not "allowed" or "forbidden"`},
		"provision delay": {func(p *Policy) { p.ProvisioningDelay = Duration(-time.Second) }, `policy.provisioningDelay: must not be negative`},
	} {
		p := capacityPolicy()
		tc.mutate(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, tc.want)
		}
	}
}

// The new fields are omitted when off, so a policy recorded before them
// encodes as it did, and they round-trip when on.
func TestCapacityFieldsAreOmittedWhenOffAndRoundTrip(t *testing.T) {
	raw, err := json.Marshal(DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"capacityWindows", "provisioningDelay", "headroom", "maxHourlyCost", "disruption"} {
		if strings.Contains(string(raw), field) {
			t.Errorf("%s appears in a policy that does not use it: %s", field, raw)
		}
	}
	p := capacityPolicy()
	raw, err = json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Policy
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil || back.CapacityWindows[0].Duration != p.CapacityWindows[0].Duration || back.Disruption.Windows[0].ScaleDown != ScaleDownAllowed {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	if DefaultPolicy().EffectiveProvisioningDelay() != DefaultProvisioningDelay {
		t.Fatal("zero provisioning delay reads as the default")
	}
}

func TestOrgPolicyValidation(t *testing.T) {
	if err := (OrgPolicy{Org: "acme", MaxNodes: 20, MaxNodesPerCluster: 12, MaxHourlyCost: 3}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    OrgPolicy
		want string
	}{
		{OrgPolicy{Org: "Acme", MaxNodes: 1}, `org "Acme" is not a lower-case DNS label`},
		{OrgPolicy{Org: "acme"}, "sets no limit"},
		{OrgPolicy{Org: "acme", MaxNodes: -1}, "maxNodes: must be within"},
		{OrgPolicy{Org: "acme", MaxNodes: 5, MaxNodesPerCluster: 6}, "maxNodesPerCluster: 6 is greater than maxNodes 5"},
		{OrgPolicy{Org: "acme", MaxHourlyCost: -2}, "maxHourlyCost: must be within"},
	} {
		err := tc.o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.o, err, tc.want)
		}
	}
}

// Zones come from the embedded database too; the answer does not depend
// on the machine's /usr/share/zoneinfo.
func TestLoadZone(t *testing.T) {
	for _, z := range []string{"", "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"} {
		if _, err := LoadZone(z); err != nil {
			t.Errorf("%q: %v", z, err)
		}
	}
}
