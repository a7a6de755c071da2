package types

import (
	"strings"
	"testing"
	"time"
)

func TestPoolKeyRoundTripsAndNamesTheBadPart(t *testing.T) {
	k := PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "aws", Cluster: "east-1"}
	got, err := ParsePoolID(k.WorkflowID())
	if err != nil || got != k {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for id, want := range map[string]string{
		"pool/acme/web/api/aws":             "must look like pool/<org>/<project>/<service>/<provider>/<cluster>",
		"pool/acme/Web/api/aws/east":        `project "Web" is not a lower-case DNS label`,
		"pool/acme/web/-api/aws/east":       `service "-api"`,
		"pool/acme/web/api//east":           "provider is empty",
		"cluster/acme/web/api/aws/east":     "must look like",
		"pool/acme/web/api/aws/" + long(64): "cluster",
	} {
		if _, err := ParsePoolID(id); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to say %q", id, err, want)
		}
	}
	if k.NodePoolLabel() != "acme.web.api.aws" {
		t.Errorf("node pool label %q", k.NodePoolLabel())
	}
}

func long(n int) string { return strings.Repeat("a", n) }

func TestWithDefaultsExceptKeepsWrittenZeros(t *testing.T) {
	d := DefaultPolicy()
	p := Policy{MaxNodes: 10}.WithDefaultsExcept(map[string]bool{"maxnodes": true, "scaleupcooldown": true, "idlecputhreshold": true})
	if p.ScaleUpCooldown != 0 || p.IdleCPUThreshold != 0 {
		t.Fatalf("written zeros replaced: %+v", p)
	}
	if p.ScaleDownCooldown != d.ScaleDownCooldown || p.MinNodes != d.MinNodes || p.MaxNodes != 10 {
		t.Fatalf("missing fields not defaulted: %+v", p)
	}
	if p.ConsolidationThreshold != WrittenConsolidationThreshold || p.ConsolidateAfter.D() != WrittenConsolidateAfter {
		t.Fatalf("a written policy lacks consolidation's written defaults: %+v", p)
	}
	if z := (Policy{}).WithDefaultsExcept(map[string]bool{"consolidationthreshold": true}); z.ConsolidationThreshold != 0 {
		t.Fatalf("a written zero consolidationThreshold replaced: %v", z.ConsolidationThreshold)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("a policy with zero cooldown is valid: %v", err)
	}
	// Knowing nothing, the old rule: zero means default, min kept with max.
	q := Policy{MaxNodes: 4}.WithDefaults()
	if q.MinNodes != 0 || q.ScaleUpCooldown != d.ScaleUpCooldown {
		t.Fatalf("WithDefaults: %+v", q)
	}
	if (Policy{}).WithDefaults().MaxNodes != 50 {
		t.Fatal("empty policy not the HIP default")
	}
}

func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := d.UnmarshalJSON([]byte(`"90s"`)); err != nil || d.D() != 90*time.Second {
		t.Fatalf("90s: %v %v", d, err)
	}
	if err := d.UnmarshalJSON([]byte(`"soon"`)); err == nil || !strings.Contains(err.Error(), `"soon"`) {
		t.Fatalf("bad duration not named: %v", err)
	}
	b, _ := Duration(5 * time.Minute).MarshalJSON()
	if string(b) != `"5m0s"` {
		t.Fatalf("marshal: %s", b)
	}
}

func TestFreeRoomNeverNegative(t *testing.T) {
	n := NodeObservation{Allocatable: Resources{MilliCPU: 1000, Memory: GiB, Pods: 10}, Requested: Resources{MilliCPU: 1500, Memory: GiB / 2, Pods: 3}}
	f := n.FreeRoom()
	if f.MilliCPU != 0 || f.Memory != GiB/2 || f.Pods != 7 {
		t.Fatalf("free room %+v", f)
	}
	if n.CPUUtilization() != 1.5 {
		t.Fatalf("utilization %v", n.CPUUtilization())
	}
}
