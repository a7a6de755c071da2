package devfleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// KwokDemand drives demo pools on a real API server: one ReplicaSet per
// pool in the pool's org namespace, its replicas following the pool's demo
// profile, so the real replicaset controller makes the pods and the real
// kube-scheduler binds them. Every tick it sets each ReplicaSet's replicas
// until ctx ends.
func KwokDemand(ctx context.Context, client k8s.Interface, pools []starter.PoolEntry, tick time.Duration, logger *slog.Logger) {
	type demand struct {
		key     types.PoolKey
		profile sim.DemandProfile
	}
	var ds []demand
	for _, p := range pools {
		if p.Demo == nil {
			continue
		}
		d := p.Demo
		ds = append(ds, demand{p.Key, sim.DemandProfile{Shape: sim.Shape(d.Shape), Pods: d.Pods, PeakPods: d.PeakPods, Period: d.Period,
			BurstPods: d.BurstPods, BurstFor: d.BurstFor, Requests: d.Requests}})
	}
	start := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		var errs []error
		for _, d := range ds {
			errs = append(errs, syncDemoReplicaSet(ctx, client, d.key, d.profile.Requests, d.profile.PodsAt(time.Since(start))))
		}
		if err := errors.Join(errs...); err != nil && ctx.Err() == nil && logger != nil {
			logger.Warn("kwok demo demand", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func syncDemoReplicaSet(ctx context.Context, client k8s.Interface, key types.PoolKey, req types.Resources, want int) error {
	ns := key.Org
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	name := "demo-" + key.Project + "-" + key.Service
	replicas := int32(want)
	rs := client.AppsV1().ReplicaSets(ns)
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, want)
	_, err := rs.Patch(ctx, name, apitypes.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	labels := map[string]string{"app": name, types.LabelOrg: key.Org, types.LabelProject: key.Project, types.LabelService: key.Service}
	requests := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(req.MilliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(req.Memory, resource.BinarySI),
	}
	_, err = rs.Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				// Each pool's pods keep to its nodes, as tenants' do.
				NodeSelector:                  map[string]string{types.LabelPool: key.NodePoolLabel()},
				TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/demo",
					Resources: corev1.ResourceRequirements{Requests: requests}}},
			}},
		},
	}, metav1.CreateOptions{})
	return err
}
