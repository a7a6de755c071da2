package workflows

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

type simCluster struct{ c connectors.Cluster }

func (s simCluster) Cluster(context.Context, string) (connectors.Cluster, error) { return s.c, nil }

// A [spot, on-demand] pool whose spot is sold out at the provider (the
// sim, every size): the planner and the buys are the real activities on a
// sim fleet. The one decision tries each spot offering cheaper than on
// demand, is refused, marks it and buys on demand; while the mark lasts no decision tries spot again; after it the
// pool buys spot once more.
func TestSpotSoldOutFallsBackToOnDemandInOneDecision(t *testing.T) {
	var soldOut []string
	for _, it := range catalogs.Sim() {
		soldOut = append(soldOut, it.Name+"//spot")
	}
	fleet, err := sim.New(sim.Config{Cluster: key().Cluster, Provider: key().Provider, Catalog: catalogs.SimSpot(), Faults: sim.FaultConfig{SoldOutOfferings: soldOut}})
	require.NoError(t, err)
	real := &activities.Activities{Clusters: simCluster{connectors.Cluster{ID: key().Cluster, Provider: fleet}}}

	p := types.DefaultPolicy()
	p.CapacityTypes = []types.CapacityType{types.CapacitySpot, types.CapacityOnDemand}
	env, w := newTestPool(t, p, busyNodes())
	var mu sync.Mutex
	var tries []activities.ProvisionInput // every buy asked of the provider
	w.planner = func(in activities.PlanInput) activities.PlanResult {
		res, err := real.PlanScaleUp(context.Background(), in)
		require.NoError(t, err)
		return res
	}
	w.provider = func(ctx context.Context, in activities.ProvisionInput) error {
		mu.Lock()
		tries = append(tries, in)
		mu.Unlock()
		in.GroupID = "" // the world's one group stands for the sim's
		in.Target = 1
		_, err := real.Provision(ctx, in)
		if err != nil && !isErrorClass(err, errclass.InsufficientCapacity) {
			return nil // only the capacity answer matters here
		}
		return err
	}
	onDemand := func() (spot, od int) {
		mu.Lock()
		defer mu.Unlock()
		for _, in := range tries {
			if in.CapacityType == types.CapacitySpot {
				spot++
			} else {
				od++
			}
		}
		return spot, od
	}
	env.RegisterDelayedCallback(func() { w.setPods(pending("p1", env.Now().Add(-2*time.Minute))) }, time.Second)
	env.RegisterDelayedCallback(func() {
		spot, od := onDemand()
		// sim-2c4g spot, then sim-4c8g spot (still cheaper than sim-2c4g
		// on demand), each refused and marked.
		require.Equal(t, 2, spot, "each spot offering cheaper than on-demand tried once, then marked")
		require.Equal(t, 1, od, "on-demand bought in the same decision")
		st := status(t, env)
		up := st.Decisions[len(st.Decisions)-1]
		require.Equal(t, "scale-up", up.Action)
		require.Contains(t, up.Outcome, "asked for")
		require.Contains(t, up.Reason, "buys on-demand sim-2c4g at $0.0200/h")
		require.Contains(t, up.Reason, "spot sim-2c4g sold out in every zone until")
		require.Contains(t, st.UnavailableOffering, "sim-2c4g//spot")
		// The node came up; a new pod waits: it buys on demand, not spot.
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n3", 0.8, 0.8))
		w.pods = []types.PendingPod{pending("p2", env.Now().Add(-2*time.Minute))}
		w.mu.Unlock()
		w.signal()
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		spot, od := onDemand()
		require.Equal(t, 2, spot, "spot tried again while marked unavailable")
		require.Equal(t, 2, od)
		// Spot is back at the provider and the mark has expired.
		require.NoError(t, fleet.SetFaults(sim.FaultConfig{}))
		w.mu.Lock()
		w.nodes = append(w.nodes, node("n4", 0.8, 0.8))
		w.pods = []types.PendingPod{pending("p3", env.Now().Add(-2*time.Minute))}
		w.mu.Unlock()
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() { w.signal() }, 3*time.Minute+30*time.Second)
	env.RegisterDelayedCallback(func() {
		spot, _ := onDemand()
		require.Equal(t, 3, spot, "spot not bought again once the mark expired")
		mu.Lock()
		last := tries[len(tries)-1]
		mu.Unlock()
		require.Equal(t, types.CapacitySpot, last.CapacityType)
		st := status(t, env)
		require.Contains(t, st.Decisions[len(st.Decisions)-1].Reason, fmt.Sprintf("buys spot sim-2c4g at $%.4f/h", 0.02*catalogs.SimSpotFraction))
		require.Empty(t, st.UnavailableOffering)
	}, 4*time.Minute)
	finish(env, 5*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	for _, in := range tries {
		require.True(t, strings.HasPrefix(string(in.IdempotencyKey), "pool/"), in.IdempotencyKey)
	}
}
