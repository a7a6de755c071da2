package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/types"
)

func TestProfilesGiveTheirPodCounts(t *testing.T) {
	steady := Steady(7, smallPod)
	diurnal := Diurnal(2, 10, 4*time.Minute, smallPod)
	burst := Burst(3, 5, 2*time.Minute, 30*time.Second, smallPod)
	cases := []struct {
		name    string
		profile DemandProfile
		at      time.Duration
		want    int
	}{
		{"steady at start", steady, 0, 7},
		{"steady much later", steady, 90 * time.Hour, 7},
		{"diurnal trough", diurnal, 0, 2},
		{"diurnal rising", diurnal, time.Minute, 6},
		{"diurnal crest", diurnal, 2 * time.Minute, 10},
		{"diurnal falling", diurnal, 3 * time.Minute, 6},
		{"diurnal next trough", diurnal, 4 * time.Minute, 2},
		{"diurnal before start", diurnal, -time.Minute, 2},
		{"burst baseline first", burst, 0, 3},
		{"burst before first", burst, 119 * time.Second, 3},
		{"burst starts", burst, 2 * time.Minute, 8},
		{"burst lasts", burst, 2*time.Minute + 29*time.Second, 8},
		{"burst ends", burst, 2*time.Minute + 30*time.Second, 3},
		{"second burst", burst, 4*time.Minute + 10*time.Second, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.profile.Validate())
			assert.Equal(t, c.want, c.profile.PodsAt(c.at))
		})
	}
}

func TestInvalidProfilesNameTheField(t *testing.T) {
	cases := []struct {
		profile DemandProfile
		want    string
	}{
		{DemandProfile{Shape: "wave", Requests: smallPod}, `shape "wave"`},
		{Steady(-1, smallPod), "demand.pods must be >= 0"},
		{Steady(1, types.Resources{MilliCPU: 100}), "demand.requests"},
		{Diurnal(5, 2, time.Minute, smallPod), "peakPods 2 is below pods 5"},
		{Diurnal(1, 2, 0, smallPod), "demand.period"},
		{Burst(1, 2, time.Minute, 2*time.Minute, smallPod), "demand.burstFor"},
		{Steady(maxPodsPerPool+1, smallPod), "allows"},
	}
	for _, c := range cases {
		err := c.profile.Validate()
		require.Error(t, err, "%+v", c.profile)
		assert.Contains(t, err.Error(), c.want)
	}
	f, _ := newTestFleet(t, nil)
	other := testPool("web")
	other.Provider = "aws"
	err := f.AddDemand(other, Steady(1, smallPod))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `provider "aws"`)
	assert.Empty(t, f.st.Demand)
}

func TestDemandCreatesLabelledReplicatedPodsFollowingTheProfile(t *testing.T) {
	f, _ := newTestFleet(t, nil)
	ctx := context.Background()
	pool := testPool("web")
	require.NoError(t, f.AddDemand(pool, Diurnal(2, 10, 4*time.Minute, smallPod)))

	counts := map[time.Duration]int{0: 2, time.Minute: 6, 2 * time.Minute: 10, 3 * time.Minute: 6, 4 * time.Minute: 2}
	for _, at := range []time.Duration{0, time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute} {
		step(t, f, t0.Add(at))
		assert.Len(t, workloadPods(t, f, pool), counts[at], "pods at %s", at)
	}
	rs, err := f.Clientset().AppsV1().ReplicaSets("acme").Get(ctx, "shop-web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(2), *rs.Spec.Replicas)

	p := workloadPods(t, f, pool)[0]
	assert.Equal(t, "acme", p.Labels[types.LabelOrg])
	assert.Equal(t, "shop", p.Labels[types.LabelProject])
	assert.Equal(t, "web", p.Labels[types.LabelService])
	assert.Equal(t, pool.NodePoolLabel(), p.Spec.NodeSelector[types.LabelPool])
	assert.Equal(t, int64(500), p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue())
	assert.Equal(t, 512*types.MiB, p.Spec.Containers[0].Resources.Requests.Memory().Value())
	owner := metav1.GetControllerOf(&p)
	require.NotNil(t, owner)
	assert.Equal(t, "ReplicaSet", owner.Kind)
	assert.Equal(t, rs.UID, owner.UID)
}

func TestDemandShrinksUnscheduledPodsFirstAndReplacesDeletedOnes(t *testing.T) {
	f, clock, pool, _ := newLoadedFleet(t, "sim-2c4g", 1, 5)
	ctx := context.Background()
	bound, pending := countBound(workloadPods(t, f, pool))
	require.Equal(t, []int{3, 2}, []int{bound, pending})

	require.NoError(t, f.AddDemand(pool, Steady(3, smallPod)))
	step(t, f, clock.Advance(time.Second))
	bound, pending = countBound(workloadPods(t, f, pool))
	assert.Equal(t, []int{3, 0}, []int{bound, pending}, "the pending pods go first")

	victim := workloadPods(t, f, pool)[0]
	require.NoError(t, f.Clientset().CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}))
	step(t, f, clock.Advance(time.Second))
	pods := workloadPods(t, f, pool)
	assert.Len(t, pods, 3, "a deleted replica is replaced")
	for _, p := range pods {
		assert.NotEqual(t, victim.Name, p.Name, "replacements get fresh names")
	}
}
