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

func TestRunningMixKeepsTheMostCommonShapes(t *testing.T) {
	var nodes []types.NodeObservation
	for i := range 40 {
		pod := types.Resources{MilliCPU: int64(250 * (i + 1)), Memory: types.GiB, Pods: 1}
		n := withPods(node("n", 0, 0), 1, pod)
		n.Requested = pod
		nodes = append(nodes, n)
	}
	common := types.Resources{MilliCPU: 250, Memory: types.GiB, Pods: 1}
	for i := range 3 {
		n := withPods(node("c", 0, 0), 1, common)
		n.Requested, n.Name = common, string(rune('a'+i))
		nodes = append(nodes, n)
	}
	got := RunningMix(obs(t0, nodes))
	if len(got) != maxMixShapes || got[0].Requests != common || got[0].Count != 4 {
		t.Fatalf("%d shapes, first %v ×%d; want %d, the 250m shape ×4 first", len(got), got[0].Requests, got[0].Count, maxMixShapes)
	}
}
