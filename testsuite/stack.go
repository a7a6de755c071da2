// Package testsuite holds shared test helpers: the embedded system on free
// loopback ports, waiting on pool state, and recorded histories for replay.
package testsuite

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devserver"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

// FreePort returns a loopback port nobody listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartStack runs the embedded system in memory on free ports, with the
// spec registered, and stops it when the test ends.
func StartStack(t testing.TB, spec starter.SpecFile, dataDir string) *devstack.Stack {
	t.Helper()
	return StartStackOn(t, spec, dataDir, nil)
}

// StartStackOn is StartStack serving clusters besides the spec's
// simulated ones (a kwok cluster on a real control plane).
func StartStackOn(t testing.TB, spec starter.SpecFile, dataDir string, clusters workers.StaticClusters) *devstack.Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	so := devserver.Options{GRPCPort: FreePort(t), UIPort: -1, LogLevel: "error"}
	if dataDir == "" {
		so.Memory = true
	} else {
		so.DataDir = dataDir
	}
	s, err := devstack.Start(ctx, devstack.Options{Server: so, Spec: spec, SimTick: 200 * time.Millisecond, ProvisionDelay: time.Second, Clusters: clusters})
	if err != nil {
		t.Fatalf("start embedded stack: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// FastPolicy is a policy with second-scale thresholds for end-to-end tests.
func FastPolicy() types.Policy {
	return types.Policy{
		MinNodes: 1, MaxNodes: 6,
		PendingThreshold:  types.Duration(2 * time.Second),
		IdleWindow:        types.Duration(4 * time.Second),
		ScaleUpCooldown:   types.Duration(3 * time.Second),
		ScaleDownCooldown: types.Duration(3 * time.Second),
		SampleInterval:    types.Duration(time.Second),
		ResyncInterval:    types.Duration(15 * time.Second),
		DrainTimeout:      types.Duration(20 * time.Second),
	}.WithDefaults()
}

// WaitForPool polls the pool's status query until cond holds or the
// timeout passes, returning the last status.
func WaitForPool(t testing.TB, s *devstack.Stack, key types.PoolKey, timeout time.Duration, what string, cond func(contract.PoolStatus) bool) contract.PoolStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var st contract.PoolStatus
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err = starter.PoolStatus(ctx, s.Client, key)
		cancel()
		if err == nil && cond(st) {
			return st
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("pool %s: %s not reached in %s (last error %v); status: state=%s nodes=%d target=%d pending=%d decisions=%+v frozen=%q blocked=%v rejected=%q repairs=%+v rejections=%+v",
		key.WorkflowID(), what, timeout, err, st.State, st.Nodes, st.TargetNodes, st.PendingPods, st.Decisions, st.Frozen, st.Blocked, st.LastRejected, st.Repairs, st.Rejected)
	return st
}
