// Package lawtest builds the observations the law's tests and the pool
// workflow's tests decide over: one pool, nodes of the sim's 4-CPU size at
// a given utilization, pending pods of half a CPU.
package lawtest

import (
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// T0 is the tests' epoch.
var T0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Key is the tests' pool.
func Key() types.PoolKey {
	return types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}
}

// Node builds a ready node with the given CPU and memory utilization.
func Node(name string, cpu, mem float64) types.NodeObservation {
	return types.NodeObservation{
		Name: name, State: types.NodeReady, Size: "sim-4c8g",
		Allocatable: types.Resources{MilliCPU: 4000, Memory: 10 * types.GiB, Pods: 110},
		Requested:   types.Resources{MilliCPU: int64(cpu * 4000), Memory: int64(mem * float64(10*types.GiB))},
	}
}

// Pending is a pod of Key's service unschedulable since since.
func Pending(name string, since time.Time) types.PendingPod {
	return types.PendingPod{Namespace: "default", Name: name, Org: "acme", Project: "web", Service: "api",
		Requests: types.Resources{MilliCPU: 500, Memory: types.GiB, Pods: 1}, UnschedulableSince: since}
}

// Obs is Key's observation at at.
func Obs(at time.Time, nodes []types.NodeObservation, pods ...types.PendingPod) *types.PoolObservation {
	return &types.PoolObservation{Pool: Key(), ObservedAt: at, Nodes: nodes, PendingPods: pods}
}

// ThreeNodes are three busy nodes.
func ThreeNodes() []types.NodeObservation {
	return []types.NodeObservation{Node("n1", 0.8, 0.8), Node("n2", 0.8, 0.8), Node("n3", 0.8, 0.8)}
}

// WithUpCooldown gives p the HIP's 5m cooldown after scale-up (the
// default has none), for the tests of that cooldown.
func WithUpCooldown(p types.Policy) types.Policy {
	p.ScaleUpCooldown = types.HIPPolicy().ScaleUpCooldown
	return p
}
