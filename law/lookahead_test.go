package law

import (
	"testing"

	"github.com/hanzoai/visor-fleet/types"
)

func TestRunningMixIsTheDemandOfTheReadyNodesWithoutGPUs(t *testing.T) {
	big := types.Resources{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 1}
	n1 := withPods(node("n1", 0, 0), 3, big)
	n1.Requested = types.Resources{MilliCPU: 5000, Memory: 10 * types.GiB, Pods: 3} // 4 + two of 0.5
	n2 := withPods(node("n2", 0, 0), 1, big)
	n2.Requested = big
	booting := n2
	booting.Name, booting.State = "n3", types.NodeProvisioning
	gpu := n2
	gpu.Name, gpu.Allocatable.GPUs = "g1", 1
	unknown := node("n4", 0.5, 0.5) // no pod count, no largest pod
	got := RunningMix(obs(t0, []types.NodeObservation{n1, n2, booting, gpu, unknown}))
	want := map[types.Resources]int{
		{MilliCPU: 500, Memory: types.GiB, Pods: 1}:      2,
		{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 1}: 2,
	}
	if len(got) != len(want) {
		t.Fatalf("mix %v, want %v", got, want)
	}
	for _, p := range got {
		if want[p.Requests] != p.Count || p.Namespace != ExpectedNamespace {
			t.Fatalf("mix %v, want %v in %s", got, want, ExpectedNamespace)
		}
	}
	if RunningMix(nil) != nil {
		t.Fatal("no observation: no mix")
	}
}
