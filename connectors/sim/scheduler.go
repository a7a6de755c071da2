package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/types"
)

// unschedulableMessage is constant so a pod's condition is written once,
// not on every step: observers key pending time off its transition time.
const unschedulableMessage = "no Ready, schedulable node matching the pod's node selector has room for its requests"

// schedule binds pending pods first-fit to Ready, uncordoned nodes whose
// labels and taints the pod's nodeSelector, node affinity and tolerations
// accept, that have room (allocatable minus what bound pods request,
// summed as the kubernetes connector and the real scheduler do), and
// where the pod-to-pod rules let it go (host ports, required
// anti-affinity, DoNotSchedule topology spread: pod_rules.go); the rest
// are marked Unschedulable.
func (f *Fleet) schedule(ctx context.Context, now time.Time, nodes []corev1.Node, pods []corev1.Pod) error {
	binds, unschedulable := Bind(nodes, pods)
	var errs []error
	for _, b := range binds {
		errs = append(errs, f.bind(ctx, b.Pod, b.Node, now))
	}
	for _, p := range unschedulable {
		errs = append(errs, f.markUnschedulable(ctx, p, now))
	}
	return errors.Join(errs...)
}

// Binding puts a pending pod on a node.
type Binding struct {
	Pod  *corev1.Pod
	Node string
}

// Bind is the sim's scheduling pass, pure: it says where each pending pod
// of pods goes among nodes (oldest pod first, first fit by node name) and
// which pods no node takes. Tests compare it with kube-scheduler's.
func Bind(nodes []corev1.Node, pods []corev1.Pod) (binds []Binding, unschedulable []*corev1.Pod) {
	nodes = slices.Clone(nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	free := make(map[string]types.Resources, len(nodes))
	for i := range nodes {
		free[nodes[i].Name] = kubernetes.NodeAllocatable(&nodes[i])
	}
	placed := newPlacedPods(nodes)
	var pending []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case p.Spec.NodeName != "":
			if room, ok := free[p.Spec.NodeName]; ok {
				free[p.Spec.NodeName] = room.Sub(kubernetes.PodRequests(p))
				placed.add(p.Spec.NodeName, p)
			}
		default:
			pending = append(pending, p)
		}
	}
	sort.Slice(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	for _, p := range pending {
		req := kubernetes.PodRequests(p)
		node := ""
		for i := range nodes {
			if schedulable(&nodes[i], p) && req.Fits(free[nodes[i].Name]) && placed.admits(&nodes[i], p) {
				node = nodes[i].Name
				break
			}
		}
		if node == "" {
			unschedulable = append(unschedulable, p)
			continue
		}
		free[node] = free[node].Sub(req)
		placed.add(node, p)
		binds = append(binds, Binding{Pod: p, Node: node})
	}
	return binds, unschedulable
}

// schedulable is the kube-scheduler's NodeUnschedulable, NodeAffinity
// (nodeSelector and required node affinity, every operator) and
// TaintToleration filters, through the same component-helpers the
// scheduler and sizing use.
func schedulable(n *corev1.Node, p *corev1.Pod) bool {
	if n.Spec.Unschedulable || n.DeletionTimestamp != nil || !nodeReady(n) {
		return false
	}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(p).Match(n); err != nil || !ok {
		return false
	}
	return !kubernetes.TaintsRepel(n, p)
}

// bind sets the node and a running status in one patch; a pod evicted
// meanwhile is simply gone.
func (f *Fleet) bind(ctx context.Context, p *corev1.Pod, node string, now time.Time) error {
	return f.patchPod(ctx, p, map[string]any{
		"spec":   map[string]any{"nodeName": node},
		"status": runningStatus(now),
	})
}

// markUnschedulable records PodScheduled=False once; its transition time
// stays when the pod first became unschedulable.
func (f *Fleet) markUnschedulable(ctx context.Context, p *corev1.Pod, now time.Time) error {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return nil
		}
	}
	cond := corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: unschedulableMessage, LastTransitionTime: metav1.NewTime(now),
	}
	return f.patchPod(ctx, p, map[string]any{
		"status": map[string]any{"phase": corev1.PodPending, "conditions": []corev1.PodCondition{cond}},
	})
}

func (f *Fleet) patchPod(ctx context.Context, p *corev1.Pod, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = f.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, apitypes.MergePatchType, b, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patch pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
