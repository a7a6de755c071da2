package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// The pods a purchase was for hear which nodes it bought and in which
// decision; a pod no size can hold hears why, once.
func TestPoolTellsPodsWhyOnTheirEvents(t *testing.T) {
	p := types.DefaultPolicy()
	env, w := newTestPool(t, p, busyNodes())
	env.RegisterDelayedCallback(func() {
		w.setPods(pending("p1", env.Now().Add(-2*time.Minute)), pending("p2", env.Now().Add(-2*time.Minute)), pending("nofit-db", env.Now().Add(-time.Hour)))
	}, time.Second)
	// Observations keep coming while nofit-db waits: it is told once.
	for i := 1; i <= 5; i++ {
		env.RegisterDelayedCallback(func() { w.signal() }, time.Duration(i)*time.Minute)
	}
	finish(env, 10*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	require.NotEmpty(t, w.provisions)

	byPod := map[string][]connectors.ClusterEvent{}
	for _, e := range w.events {
		require.Equal(t, connectors.EventKindPod, e.Kind, "%+v", e)
		require.Equal(t, "default", e.Namespace)
		byPod[e.Name] = append(byPod[e.Name], e)
	}
	for _, pod := range []string{"p1", "p2"} {
		require.Len(t, byPod[pod], 1, "pod %s: %+v", pod, w.events)
		e := byPod[pod][0]
		require.Equal(t, connectors.EventNormal, e.Type)
		require.Equal(t, connectors.EventTriggeredScaleUp, e.Reason)
		require.Regexp(t, `^visor: buying \d+ × sim-4c8g for this pod, pool pool/acme/web/api/sim/east, decision #\d+$`, e.Message)
	}
	require.Len(t, byPod["nofit-db"], 1, "an unplaceable pod is told once, not on every decision: %+v", byPod["nofit-db"])
	e := byPod["nofit-db"][0]
	require.Equal(t, connectors.EventWarning, e.Type)
	require.Equal(t, connectors.EventNotTriggerScaleUp, e.Reason)
	require.True(t, strings.Contains(e.Message, "nodeSelector disktype=nvme: no size in this pool has that label"), e.Message)
}
