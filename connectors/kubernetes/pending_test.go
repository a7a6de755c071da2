package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
)

// TestPendingMeansTriedAndRefusedAndNotNominated: of a burst of thousands
// of unbound pods, a pool counts as pending only those kube-scheduler
// tried and refused (PodScheduled=False, Unschedulable) and did not
// nominate a node for; untried pods (no condition yet) and nominated ones
// (preemption is making room) are not demand for a new node.
func TestPendingMeansTriedAndRefusedAndNotNominated(t *testing.T) {
	since := observedAt.Add(-time.Minute).Truncate(time.Second)
	const each = 1500
	var objs []runtime.Object
	for i := range each {
		objs = append(objs,
			newPod("web", fmt.Sprintf("refused-%d", i), tenant("acme", "shop", "api"), unschedulable(since), requesting("500m", "1Gi")),
			newPod("web", fmt.Sprintf("untried-%d", i), tenant("acme", "shop", "api"), requesting("500m", "1Gi")),
		)
		nominated := newPod("web", fmt.Sprintf("nominated-%d", i), tenant("acme", "shop", "api"), unschedulable(since), requesting("500m", "1Gi"))
		nominated.Status.NominatedNodeName = "n1"
		objs = append(objs, nominated)
	}
	client, _ := kubefake.NewClientset(kubefake.Options{}, objs...)
	got, err := NewObserver(client, observerConfig(nil)).ObserveCluster(context.Background())
	require.NoError(t, err)
	api := got.Pools[apiPool.WorkflowID()]
	assert.Equal(t, each, api.PendingCount(), "only the refused, unnominated pods are pending")
	for _, pod := range api.PendingPods {
		assert.Regexp(t, `^refused-`, pod.Name)
	}

	// The watcher's wake-ups agree: nominating a refused pod ends its
	// pending, as binding does.
	o := NewObserver(client, observerConfig(nil))
	refused := newPod("web", "p", tenant("acme", "shop", "api"), unschedulable(since))
	nominated := refused.DeepCopy()
	nominated.Status.NominatedNodeName = "n1"
	var told []string
	o.podEvent(refused, nominated, func(id string) { told = append(told, id) })
	assert.Equal(t, []string{apiPool.WorkflowID(), apiPool.WorkflowID()}, told)
	_, pending := o.pendingSince(nominated)
	assert.False(t, pending)
}
