package sim

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/visor-fleet/types"
)

// The per-node agent DaemonSet: its pods exercise the observer's and the
// drainer's DaemonSet exclusions.
const (
	agentNamespace = "kube-system"
	agentName      = "sim-agent"
	workloadImage  = "sim/workload:1"
)

var agentRequests = types.Resources{MilliCPU: 50, Memory: 64 * types.MiB}

func agentLabels() map[string]string { return map[string]string{"app.kubernetes.io/name": agentName} }

// workloadLabels are the pod labels of a pool's workload: tenant
// attribution as the HIP asks, plus the app name.
func workloadLabels(pool types.PoolKey) map[string]string {
	return map[string]string{
		types.LabelOrg: pool.Org, types.LabelProject: pool.Project, types.LabelService: pool.Service,
		"app.kubernetes.io/name": pool.Service,
	}
}

func replicaSetName(pool types.PoolKey) string { return pool.Project + "-" + pool.Service }

func controllerRef(kind, name string, uid apitypes.UID) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

func (f *Fleet) ensureDaemonSet(ctx context.Context) error {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: agentName, Namespace: agentNamespace, Labels: agentLabels(), UID: "sim-ds-" + agentName},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: agentLabels()},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agentLabels()}},
		},
	}
	_, err := f.cs.AppsV1().DaemonSets(agentNamespace).Create(ctx, ds, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create DaemonSet %s: %w", agentName, err)
	}
	return nil
}

func agentPod(node string, now time.Time) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: agentName + "-" + node, Namespace: agentNamespace, Labels: agentLabels(),
			UID:               apitypes.UID("sim-pod-" + agentName + "-" + node),
			CreationTimestamp: metav1.NewTime(now),
			OwnerReferences:   []metav1.OwnerReference{controllerRef("DaemonSet", agentName, "sim-ds-"+agentName)},
		},
		Spec: corev1.PodSpec{
			NodeName:    node,
			Containers:  []corev1.Container{{Name: "agent", Image: workloadImage, Resources: corev1.ResourceRequirements{Requests: requestList(agentRequests)}}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
	}
	p.Status = runningStatus(now)
	return p
}

func (d *poolDemand) replicaSet(replicas int) *appsv1.ReplicaSet {
	name := replicaSetName(d.Pool)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: d.Pool.Org, Labels: workloadLabels(d.Pool),
			UID: apitypes.UID("sim-rs-" + d.Pool.Org + "-" + name),
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: workloadLabels(d.Pool)},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: workloadLabels(d.Pool)}},
		},
	}
}

// workloadPod is one replica: it asks for the pool's nodes by selector and
// is owned by the pool's ReplicaSet, so a drain treats it as replicated.
func (d *poolDemand) workloadPod(seq int64, now time.Time) *corev1.Pod {
	rs := replicaSetName(d.Pool)
	name := fmt.Sprintf("%s-%d", rs, seq)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: d.Pool.Org, Labels: workloadLabels(d.Pool),
			UID:               apitypes.UID("sim-pod-" + d.Pool.Org + "-" + name),
			CreationTimestamp: metav1.NewTime(now),
			OwnerReferences:   []metav1.OwnerReference{controllerRef("ReplicaSet", rs, apitypes.UID("sim-rs-"+d.Pool.Org+"-"+rs))},
		},
		Spec: corev1.PodSpec{
			NodeSelector:  map[string]string{types.LabelPool: d.Pool.NodePoolLabel()},
			Containers:    []corev1.Container{{Name: "app", Image: workloadImage, Resources: corev1.ResourceRequirements{Requests: requestList(d.Profile.Requests)}}},
			RestartPolicy: corev1.RestartPolicyAlways,
			SchedulerName: corev1.DefaultSchedulerName,
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// runningStatus is a bound pod whose containers started at once.
func runningStatus(now time.Time) corev1.PodStatus {
	t := metav1.NewTime(now)
	cond := func(c corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: t}
	}
	return corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &t,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodScheduled), cond(corev1.PodInitialized), cond(corev1.ContainersReady), cond(corev1.PodReady),
		},
	}
}
