package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/types"
)

// spotPool is the spec's pool whose node labels ask for spot.
func spotPool(tr truth) types.PoolKey {
	for _, p := range tr.Spec.Pools {
		if p.Policy.NodeLabels[types.CapacityTypeLabel] == "spot" {
			return p.Key
		}
	}
	panic("pools.yaml has no spot pool")
}

// withSpotHistory gives the healthy fleet an interruption handled well:
// the notice acknowledged, a replacement launched a few seconds after it,
// the pool's pod on a node, and one capacity refusal.
func withSpotHistory(tr *truth) {
	k := spotPool(*tr)
	s := tr.Sims[k.Cluster]
	noticeAt := readAt.Add(-10 * time.Minute)
	s.Inventory.Notices = append(s.Inventory.Notices, sim.PoolNotice{Pool: k, Acked: true, Notice: connectors.Interruption{
		InstanceID: "i-spot-1", Kind: connectors.InterruptionSpot, NoticeAt: noticeAt, Deadline: noticeAt.Add(2 * time.Minute), ID: "sim-notice-1"}})
	s.Inventory.Ended = append(s.Inventory.Ended, sim.PoolInstance{Pool: k, Size: "sim-4c8g", GroupID: "g-" + k.Service,
		Instance: connectors.Instance{ID: "i-spot-2", CreatedAt: noticeAt.Add(5 * time.Second), EndedAt: noticeAt.Add(5 * time.Minute)}})
	s.Inventory.Refusals = append(s.Inventory.Refusals, sim.CapacityRefusal{Pool: k, Size: "sim-2c4g", CapacityType: types.CapacitySpot, At: noticeAt})
	s.Pods = append(s.Pods, spotPod(k, "web-0", "node-1", readAt.Add(-time.Hour)))
	tr.Sims[k.Cluster] = s
}

func spotPod(k types.PoolKey, name, node string, created time.Time) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{types.LabelOrg: k.Org, types.LabelProject: k.Project, types.LabelService: k.Service}},
		Spec: corev1.PodSpec{NodeName: node},
	}
}

func TestAnInterruptionWithoutReplacementOrAcknowledgementIsAViolation(t *testing.T) {
	tr := healthyTruth(t)
	k := spotPool(tr)
	s := tr.Sims[k.Cluster]
	s.Inventory.Ended = s.Inventory.Ended[:len(s.Inventory.Ended)-1] // no replacement
	s.Inventory.Notices[0].Acked = false
	tr.Sims[k.Cluster] = s
	r := checkInterruptionsReplaced(tr)
	require.Equal(t, 1, r.Checked)
	require.Len(t, r.Violations, 2, "%v", r.Violations)
	require.Contains(t, r.Violations[0], "no replacement launched by its deadline")
	require.Contains(t, r.Violations[1], "never acknowledged")

	// A notice whose deadline is not yet past (with grace) is not judged.
	s.Inventory.Notices[0].Notice.Deadline = readAt.Add(-10 * time.Second)
	tr.Sims[k.Cluster] = s
	require.Zero(t, checkInterruptionsReplaced(tr).Checked)
}

func TestAPodWaitingPastNoticePlusBootIsAViolation(t *testing.T) {
	tr := healthyTruth(t)
	k := spotPool(tr)
	s := tr.Sims[k.Cluster]
	s.Pods = append(s.Pods,
		spotPod(k, "web-1", "", readAt.Add(-time.Minute)),    // waiting a minute: within the limit
		spotPod(k, "web-2", "", readAt.Add(-10*time.Minute))) // far past 2 min + boot + threshold + resyncs
	tr.Sims[k.Cluster] = s
	r := checkPodsHaveNodes(tr)
	require.Equal(t, 3, r.Checked)
	require.Len(t, r.Violations, 1)
	require.Contains(t, r.Violations[0], "default/web-2")
}

func TestAnOfferingAskedForAgainWithinThreeMinutesIsReported(t *testing.T) {
	tr := healthyTruth(t)
	k := spotPool(tr)
	s := tr.Sims[k.Cluster]
	first := s.Inventory.Refusals[0].At
	s.Inventory.Refusals = append(s.Inventory.Refusals,
		sim.CapacityRefusal{Pool: k, Size: "sim-2c4g", CapacityType: types.CapacitySpot, At: first.Add(30 * time.Second)},
		sim.CapacityRefusal{Pool: k, Size: "sim-2c4g", CapacityType: types.CapacityOnDemand, At: first.Add(40 * time.Second)},
		sim.CapacityRefusal{Pool: k, Size: "sim-2c4g", CapacityType: types.CapacitySpot, At: first.Add(4 * time.Minute)})
	tr.Sims[k.Cluster] = s
	r := checkOfferingRetries(tr)
	require.Equal(t, 4, r.Checked)
	require.Len(t, r.Violations, 1, "only the spot retry 30 s after its refusal: %v", r.Violations)
	require.Contains(t, r.Violations[0], "sim-2c4g//spot")
	require.NotEmpty(t, r.Advisory, "reported, not counted, until pools mark offerings unavailable")
}
