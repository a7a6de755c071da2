package activities

import (
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

func TestFingerprintChangesOnlyWhenADecisionInputCrossesALine(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	node := func(name string, state types.NodeState, requestedCPU int64) types.NodeObservation {
		return types.NodeObservation{Name: name, State: state,
			Allocatable: types.Resources{MilliCPU: 1000, Memory: 4 * types.GiB}, Requested: types.Resources{MilliCPU: requestedCPU, Memory: types.GiB / 8}}
	}
	pod := func(name string, since time.Time) types.PendingPod {
		return types.PendingPod{Namespace: "web", Name: name, UnschedulableSince: since}
	}
	base := types.PoolObservation{
		Nodes:       []types.NodeObservation{node("a", types.NodeReady, 100), node("b", types.NodeReady, 900)},
		PendingPods: []types.PendingPod{pod("p1", t0), pod("p2", t0.Add(time.Second))},
	}
	th := contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}
	fp := Fingerprint(base, th)

	same := base
	same.Nodes = []types.NodeObservation{node("b", types.NodeReady, 850), node("a", types.NodeReady, 200)} // reordered, usage moved within its side of the line
	same.PendingPods = []types.PendingPod{base.PendingPods[1], base.PendingPods[0]}
	same.ObservedAt = t0.Add(time.Minute)
	if got := Fingerprint(same, th); got != fp {
		t.Fatalf("nothing crossed a line but the fingerprint moved:\n%s\n%s", fp, got)
	}

	for name, changed := range map[string]types.PoolObservation{
		"node went busy":       {Nodes: []types.NodeObservation{node("a", types.NodeReady, 400), base.Nodes[1]}, PendingPods: base.PendingPods},
		"node went NotReady":   {Nodes: []types.NodeObservation{node("a", types.NodeNotReady, 100), base.Nodes[1]}, PendingPods: base.PendingPods},
		"node left":            {Nodes: base.Nodes[:1], PendingPods: base.PendingPods},
		"pod got scheduled":    {Nodes: base.Nodes, PendingPods: base.PendingPods[:1]},
		"pod pending again":    {Nodes: base.Nodes, PendingPods: []types.PendingPod{pod("p1", t0.Add(time.Hour)), base.PendingPods[1]}},
		"a new pod is pending": {Nodes: base.Nodes, PendingPods: append([]types.PendingPod{pod("p3", t0)}, base.PendingPods...)},
	} {
		if Fingerprint(changed, th) == fp {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}

	// Zero thresholds (a pool registered before it sent any) mean the
	// policy defaults, not "nothing is ever idle".
	if Fingerprint(base, contract.PoolThresholds{}) != Fingerprint(base, contract.PoolThresholds{IdleCPU: types.DefaultPolicy().IdleCPUThreshold, IdleMemory: types.DefaultPolicy().IdleMemoryThreshold}) {
		t.Error("zero thresholds are not the defaults")
	}
	// The thresholds decide idleness: at 5% node a is busy.
	if Fingerprint(base, contract.PoolThresholds{IdleCPU: 0.05, IdleMemory: 0.4}) == fp {
		t.Error("a stricter idle threshold did not change node a's side of the line")
	}
}

func TestPoolPartIsThePoolOrAnEmptyOneStampedWithTheSample(t *testing.T) {
	key := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}
	other := key
	other.Service = "search"
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	pools := map[string]types.PoolObservation{
		key.WorkflowID():   {Pool: other, Nodes: []types.NodeObservation{{Name: "n1", State: types.NodeReady}}},
		other.WorkflowID(): {Nodes: []types.NodeObservation{{Name: "n2"}}},
	}

	po := PoolPart(pools, key, t0, "sample")
	if po.Pool != key || !po.ObservedAt.Equal(t0) || po.Reason != "sample" || len(po.Nodes) != 1 || po.Nodes[0].Name != "n1" {
		t.Fatalf("got %+v", po)
	}
	if po.PendingPods == nil {
		t.Fatal("pending pods must be an empty list, not null, so the pool can tell none from unknown")
	}

	absent := key
	absent.Service = "batch"
	empty := PoolPart(pools, absent, t0, "full-state")
	if empty.Pool != absent || empty.Nodes == nil || len(empty.Nodes) != 0 || empty.PendingPods == nil || empty.Reason != "full-state" {
		t.Fatalf("a pool with nothing in the cluster is observed as empty: %+v", empty)
	}
}

// A CapacityBuffer appearing, changing its count, or gaining an error is
// a decision input: the pool buys for buffers.
func TestFingerprintMovesWithTheBuffers(t *testing.T) {
	th := contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}
	web := types.BufferObservation{Namespace: "shop", Name: "web", Pods: 2, Requests: types.Resources{MilliCPU: 500}}
	other := types.BufferObservation{Namespace: "shop", Name: "batch", Pods: 1, Requests: types.Resources{MilliCPU: 100}}
	base := types.PoolObservation{Buffers: []types.BufferObservation{web, other}}
	fp := Fingerprint(base, th)
	if Fingerprint(types.PoolObservation{Buffers: []types.BufferObservation{other, web}}, th) != fp {
		t.Error("the buffers' order moved the fingerprint")
	}
	more, broken := web, web
	more.Pods = 3
	broken.Pods, broken.Error = 0, "podtemplate shop/web not found"
	for name, changed := range map[string]types.PoolObservation{
		"no buffers":       {},
		"more pods":        {Buffers: []types.BufferObservation{more, other}},
		"buffer is broken": {Buffers: []types.BufferObservation{broken, other}},
	} {
		if Fingerprint(changed, th) == fp {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}
}
