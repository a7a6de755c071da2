package activities

import (
	"context"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// countingProvider is the sim's provider, counting the changes asked of it.
type countingProvider struct {
	connectors.Provider
	changes atomic.Int32
}

func (c *countingProvider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	c.changes.Add(1)
	return c.Provider.CreateNodeGroup(ctx, spec, key)
}

func (c *countingProvider) DeleteNodes(ctx context.Context, groupID string, names []string, key connectors.IdempotencyKey) error {
	c.changes.Add(1)
	return c.Provider.DeleteNodes(ctx, groupID, names, key)
}

func (c *countingProvider) DeleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error {
	c.changes.Add(1)
	return c.Provider.DeleteNodeGroup(ctx, groupID, key)
}

// A provider activity heartbeats what it has done; a retry of it (a new
// worker, after the old one was lost) starts from those details and asks
// the provider for nothing it already did.
func TestProviderActivitiesHeartbeatTheirProgressAndResumeFromIt(t *testing.T) {
	fleet, err := sim.New(sim.Config{Cluster: "dev", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	prov := &countingProvider{Provider: fleet}
	acts := &Activities{Clusters: oneCluster{connectors.Cluster{ID: "dev", Provider: prov}}}
	pool := types.PoolKey{Org: "acme", Project: "shop", Service: "web", Provider: "sim", Cluster: "dev"}
	var ts testsuite.WorkflowTestSuite

	run := func(t *testing.T, details any, fn, in any) (last converter.EncodedValues, result converter.EncodedValue) {
		t.Helper()
		env := ts.NewTestActivityEnvironment()
		env.RegisterActivity(acts)
		if details != nil {
			env.SetHeartbeatDetails(details)
		}
		env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) { last = d })
		v, err := env.ExecuteActivity(fn, in)
		if err != nil {
			t.Fatal(err)
		}
		return last, v
	}

	in := ProvisionInput{Key: pool, Size: "sim-2c4g", Target: 2, IdempotencyKey: "k/1/provision-0"}
	beats, v := run(t, nil, acts.Provision, in)
	var first ProvisionResult
	if err := v.Get(&first); err != nil {
		t.Fatal(err)
	}
	// The SDK throttles heartbeats, so the one sent after the change may
	// not reach the server before the activity completes; what a retry
	// finds is what was sent.
	if beats == nil {
		t.Fatal("provision sent no heartbeat")
	}
	done := provisionProgress{Applied: true, GroupID: first.GroupID}
	if n := prov.changes.Load(); n != 1 {
		t.Fatalf("%d provider changes, want 1", n)
	}

	_, v = run(t, done, acts.Provision, in)
	var again ProvisionResult
	if err := v.Get(&again); err != nil {
		t.Fatal(err)
	}
	if n := prov.changes.Load(); n != 1 || again.GroupID != first.GroupID || again.TotalTarget != 2 {
		t.Fatalf("the resumed provision made %d changes in all and answered %+v; want 1 change and group %s at 2", n, again, first.GroupID)
	}

	// An earlier attempt deleted the group, heartbeat that, and was lost.
	rel := ReleaseInput{Key: pool, IdempotencyKey: "k/2/release"}
	if err := fleet.DeleteNodeGroup(context.Background(), first.GroupID, rel.IdempotencyKey+"/"+connectors.IdempotencyKey(first.GroupID)); err != nil {
		t.Fatal(err)
	}
	half := releaseProgress{ReleaseResult: ReleaseResult{Groups: 1, Released: 2}, Deleted: []string{first.GroupID}}
	beats, v = run(t, half, acts.ReleasePool, rel)
	var res ReleaseResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	// Only the details remember the earlier attempt's work.
	if n := prov.changes.Load(); n != 1 || res.Groups != 1 || res.Released != 2 {
		t.Fatalf("the resumed release made %d changes in all and answered %+v; want 1 change and the earlier attempt's count", n, res)
	}
	if beats == nil {
		t.Fatal("release sent no heartbeat")
	}
}
