package sim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/visor-fleet/types"
)

// poolDemand is one pool's generator; Start and NextPod persist so a
// restarted fleet continues the same curve with fresh pod names.
type poolDemand struct {
	Pool     types.PoolKey `json:"pool"`
	Profile  DemandProfile `json:"profile"`
	Start    time.Time     `json:"start"`
	NextPod  int64         `json:"nextPod"`
	Replicas int           `json:"replicas"`
}

// AddDemand sets the pool's demand profile. A pool that already has demand
// keeps its start time, so re-adding the same profiles after a restart
// resumes the curves where they were.
func (f *Fleet) AddDemand(pool types.PoolKey, profile DemandProfile) error {
	if err := f.checkPool(pool); err != nil {
		return fmt.Errorf("sim: AddDemand: %w", err)
	}
	if err := profile.Validate(); err != nil {
		return fmt.Errorf("sim: AddDemand %s: %w", pool, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	label := pool.NodePoolLabel()
	if d := f.st.Demand[label]; d != nil {
		d.Profile = profile
	} else {
		f.st.Demand[label] = &poolDemand{Pool: pool, Profile: profile, Start: f.cfg.Clock(), Replicas: -1}
	}
	f.touch()
	return f.saveLocked(context.Background())
}

// generateDemand is each pool's ReplicaSet controller: it creates or
// deletes pods until the pool runs what its profile asks for now, deleting
// unscheduled pods first and then the newest, as the real one does.
func (f *Fleet) generateDemand(ctx context.Context, now time.Time, _ []corev1.Node, pods []corev1.Pod) error {
	labels := make([]string, 0, len(f.st.Demand))
	for l := range f.st.Demand {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	replicas := replicasByOwner(pods)
	var errs []error
	for _, l := range labels {
		d := f.st.Demand[l]
		want := d.Profile.PodsAt(now.Sub(d.Start))
		errs = append(errs, f.syncReplicaSet(ctx, d, want))
		live := replicas[d.Pool.Org+"/"+replicaSetName(d.Pool)]
		for n := len(live); n < want; n++ {
			d.NextPod++
			f.touch()
			_, err := f.cs.CoreV1().Pods(d.Pool.Org).Create(ctx, d.workloadPod(d.NextPod, now), metav1.CreateOptions{})
			if err != nil {
				errs = append(errs, fmt.Errorf("create pod for %s: %w", d.Pool, err))
			}
		}
		if len(live) > want {
			sort.SliceStable(live, func(i, j int) bool { return deleteBefore(live[i], live[j]) })
			for _, p := range live[:len(live)-want] {
				errs = append(errs, f.deletePod(ctx, p))
			}
		}
	}
	return errors.Join(errs...)
}

// replicasByOwner groups live ReplicaSet pods by namespace/owner name.
func replicasByOwner(pods []corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, ref := range p.OwnerReferences {
			if ref.Controller != nil && *ref.Controller && ref.Kind == "ReplicaSet" {
				out[p.Namespace+"/"+ref.Name] = append(out[p.Namespace+"/"+ref.Name], p)
			}
		}
	}
	return out
}

// deleteBefore orders scale-down victims: unscheduled, then newest.
func deleteBefore(a, b *corev1.Pod) bool {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

// syncReplicaSet keeps the pool's ReplicaSet object, whose replicas tell
// the observer and drainer what the workload wants.
func (f *Fleet) syncReplicaSet(ctx context.Context, d *poolDemand, want int) error {
	if d.Replicas == want {
		return nil
	}
	rsClient := f.cs.AppsV1().ReplicaSets(d.Pool.Org)
	rs := d.replicaSet(want)
	_, err := rsClient.Create(ctx, rs, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, want)
		_, err = rsClient.Patch(ctx, rs.Name, apitypes.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return fmt.Errorf("sync ReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	d.Replicas = want
	f.touch()
	return nil
}
