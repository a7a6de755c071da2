package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// burstState is a pool in the middle of a 10,000-pod burst: nodes Ready
// and booting, thousands of pods pending in a few shapes (500 listed), and
// the purchases made for them.
func burstState(nodes, pending int) (*PoolState, types.PoolObservation, time.Time) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	p := types.DefaultPolicy()
	p.MaxNodes = 5000
	s := poolcore.New(contract.PoolSpec{Policy: p})
	s.EnsureMaps()
	obs := types.PoolObservation{ObservedAt: now}
	for i := range nodes {
		n := types.NodeObservation{
			Name: fmt.Sprintf("node-%04d", i), Size: "kwok-4c8g", State: types.NodeReady, CreatedAt: now.Add(-time.Duration(i) * time.Second),
			Allocatable: types.Resources{MilliCPU: 4000, Memory: 8 * types.GiB, Pods: 110},
			Requested:   types.Resources{MilliCPU: int64(1000 * (i % 4)), Memory: int64(i%4) * types.GiB, Pods: int64(i % 4)},
			Labels:      map[string]string{"hanzo.ai/pool": "acme.kwok.s.kwok", "node.kubernetes.io/instance-type": "kwok-4c8g"},
		}
		obs.Nodes = append(obs.Nodes, n)
		s.SeenReady[n.Name] = n.CreatedAt.Add(3 * time.Second)
	}
	shapes := []types.Resources{{MilliCPU: 250, Memory: 512 * types.MiB, Pods: 1}, {MilliCPU: 500, Memory: types.GiB, Pods: 1}, {MilliCPU: 1000, Memory: 2 * types.GiB, Pods: 1}, {MilliCPU: 2000, Memory: 3 * types.GiB, Pods: 1}}
	for i := range pending {
		pod := types.PendingPod{Namespace: "scale", Name: fmt.Sprintf("shape-%d-%05d", i%4, i), Org: "acme", Project: "kwok", Service: "s",
			Requests: shapes[i%4], UnschedulableSince: now.Add(-time.Duration(i%30) * time.Second), TriedAt: now.Add(-time.Second)}
		obs.PendingPods = append(obs.PendingPods, pod)
	}
	obs = obs.SummarizePending(types.MaxListedPending, types.MaxPendingShapes)
	for i, pod := range obs.PendingEntries() {
		if i%2 == 0 {
			s.BoughtFor[pod.Key()] = poolcore.Purchase{Seq: 1, At: now.Add(-time.Minute), Size: "kwok-4c8g", Since: pod.UnschedulableSince}
		}
	}
	return s, obs, now
}

// BenchmarkBurstObserveAndDecide is one workflow task of a pool in a
// 10,000-pod burst: an observation folded into the state and the law's
// decision over it, the work the workflow goroutine does between yields
// (the SDK fails a task whose goroutine runs over a second).
func BenchmarkBurstObserveAndDecide(b *testing.B) {
	for _, size := range []struct{ nodes, pending int }{{100, 500}, {450, 2000}, {1500, 10000}} {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", size.nodes, size.pending), func(b *testing.B) {
			s, obs, now := burstState(size.nodes, size.pending)
			p := &pool{state: s, rules: poolcore.AllRules()}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Fold(obs, now, p.rules)
				p.decide(now)
				p.state.PlanRoom(now, p.rules)
			}
		})
	}
}
