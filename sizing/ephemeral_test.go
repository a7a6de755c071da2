package sizing

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// diskPods are n pods of 100m/128Mi that each need disk bytes of
// ephemeral storage.
func diskPods(name string, n int, disk int64) []types.PendingPod {
	out := pods(name, n, 100, 128*types.MiB)
	for i := range out {
		out[i].Requests.EphemeralStorage = disk
	}
	return out
}

func TestEphemeralStorageFitsOrSaysWhy(t *testing.T) {
	gi := types.GiB
	tests := []struct {
		name     string
		provider string
		pods     []types.PendingPod
		existing []types.NodeObservation
		// wantSize × wantNodes bought, or wantReason for every pod.
		wantSize   string
		wantNodes  int
		wantReason string
		// wantOn: every pod placed on this existing node.
		wantOn string
	}{
		{name: "fits a sim disk (100Gi less the 10% eviction reserve)", provider: "sim",
			pods: diskPods("cache", 1, 80*gi), wantSize: "sim-2c4g", wantNodes: 1},
		{name: "more disk than any sim size has", provider: "sim", pods: diskPods("cache", 1, 200*gi),
			wantReason: "needs 200Gi ephemeral-storage, largest allowed size sim-16c64g allocates 90Gi"},
		{name: "packing counts disk: two 40Gi pods per 90Gi node", provider: "sim",
			pods: diskPods("cache", 4, 40*gi), wantSize: "sim-2c4g", wantNodes: 2},
		{name: "EKS's 20GiB default root volume", provider: "aws", pods: diskPods("cache", 1, 30*gi),
			wantReason: "needs 30Gi ephemeral-storage, largest allowed size c6i.12xlarge allocates 18Gi"},
		{name: "a droplet's local SSD holds it", provider: "digitalocean", pods: diskPods("cache", 1, 30*gi),
			wantSize: "s-1vcpu-2gb", wantNodes: 1},
		{name: "a Hetzner type with the disk for it", provider: "hetzner", pods: diskPods("cache", 1, 100*gi),
			wantSize: "cpx31", wantNodes: 1}, // 160GB: the cheapest with 100Gi after the reserve
		{name: "an existing node with the disk free takes it", provider: "sim", pods: diskPods("cache", 1, 5*gi),
			existing: []types.NodeObservation{node("n1", "sim-8c16g", types.NodeReady,
				types.Resources{MilliCPU: 7800, Memory: 15 * gi, Pods: 109, EphemeralStorage: 90 * gi},
				types.Resources{MilliCPU: 1000, Memory: gi, Pods: 3, EphemeralStorage: 80 * gi})},
			wantOn: "n1"},
		{name: "an existing node short of disk does not", provider: "sim", pods: diskPods("cache", 1, 20*gi),
			existing: []types.NodeObservation{node("n1", "sim-8c16g", types.NodeReady,
				types.Resources{MilliCPU: 7800, Memory: 15 * gi, Pods: 109, EphemeralStorage: 90 * gi},
				types.Resources{MilliCPU: 1000, Memory: gi, Pods: 3, EphemeralStorage: 80 * gi})},
			wantSize: "sim-2c4g", wantNodes: 1},
		{name: "a node that reports no ephemeral storage holds no pod asking for some", provider: "sim", pods: diskPods("cache", 1, gi),
			existing: []types.NodeObservation{node("n1", "sim-8c16g", types.NodeReady,
				types.Resources{MilliCPU: 7800, Memory: 15 * gi, Pods: 109}, types.Resources{})},
			wantSize: "sim-2c4g", wantNodes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			catalog, err := catalogFor(tc.provider)
			if err != nil {
				t.Fatal(err)
			}
			p := PlanScaleUp(Request{Pending: tc.pods, Catalog: catalog, Existing: tc.existing})
			switch {
			case tc.wantReason != "":
				if p.NewNodes != 0 || len(p.Unplaceable) != len(tc.pods) {
					t.Fatalf("want nothing bought, every pod unplaceable; got %d × %q, unplaceable %+v", p.NewNodes, p.Size, p.Unplaceable)
				}
				for _, u := range p.Unplaceable {
					if u.Code != CodeNoFit || u.Reason != tc.wantReason {
						t.Errorf("%s: got %s %q, want %s %q", u.Pod, u.Code, u.Reason, CodeNoFit, tc.wantReason)
					}
				}
			case tc.wantOn != "":
				if p.NewNodes != 0 || len(p.Placements) != len(tc.pods) {
					t.Fatalf("want every pod on %s; got %d new, placements %+v, unplaceable %+v", tc.wantOn, p.NewNodes, p.Placements, p.Unplaceable)
				}
				for _, pl := range p.Placements {
					if pl.Node != ExistingNodePrefix+tc.wantOn {
						t.Errorf("%s on %s, want %s", pl.Pod, pl.Node, tc.wantOn)
					}
				}
			default:
				if p.Size != tc.wantSize || p.NewNodes != tc.wantNodes || len(p.Unplaceable) != 0 {
					t.Fatalf("want %d × %s; got %d × %q, unplaceable %+v", tc.wantNodes, tc.wantSize, p.NewNodes, p.Size, p.Unplaceable)
				}
				for _, pl := range p.Placements {
					if !strings.HasPrefix(pl.Node, NewNodePrefix) {
						t.Errorf("%s on %s, want a new node", pl.Pod, pl.Node)
					}
				}
			}
		})
	}
}

func TestTemplatesAllocateEphemeralStorage(t *testing.T) {
	for _, provider := range []string{"aws", "digitalocean", "hetzner", "sim"} {
		catalog, _ := catalogFor(provider)
		for _, it := range catalog {
			if it.EphemeralStorage <= 0 {
				t.Errorf("%s %s: no root disk", provider, it.Name)
				continue
			}
			q := Templates(it, TemplateOptions{})[0].Node().Status.Allocatable[corev1.ResourceEphemeralStorage]
			if want := it.EphemeralStorage - it.EphemeralStorage/10; q.Value() != want {
				t.Errorf("%s %s: template allocatable ephemeral-storage %s, want %d (disk less the eviction reserve)", provider, it.Name, q.String(), want)
			}
		}
	}
}

func TestResourcesWithoutEphemeralStorageEncodeAsBefore(t *testing.T) {
	b, _ := json.Marshal(types.Resources{MilliCPU: 500, Memory: types.GiB, Pods: 1})
	if strings.Contains(string(b), "ephemeral") {
		t.Errorf("zero ephemeral storage encoded: %s", b)
	}
	var r types.Resources
	if err := json.Unmarshal([]byte(`{"milliCPU":500,"memoryBytes":1073741824,"pods":1,"ephemeralStorageBytes":2147483648}`), &r); err != nil ||
		r.EphemeralStorage != 2*types.GiB {
		t.Errorf("decoded %+v, %v", r, err)
	}
	if !(types.Resources{EphemeralStorage: 1}).Fits(types.Resources{EphemeralStorage: 1}) ||
		(types.Resources{EphemeralStorage: 2}).Fits(types.Resources{EphemeralStorage: 1}) ||
		!(types.Resources{EphemeralStorage: -1}).IsNegative() {
		t.Error("Fits and IsNegative ignore ephemeral storage")
	}
}
