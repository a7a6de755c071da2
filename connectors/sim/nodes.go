package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hanzoai/visor-fleet/types"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/sizing"
)

// providerIDPrefix marks nodes this fleet's cloud owns, as "aws://" does.
const providerIDPrefix = "sim://"

func (f *Fleet) providerID(m *machine) string {
	return providerIDPrefix + f.cfg.Cluster + "/" + m.ID
}

// nodeObject is the Node a machine's kubelet registers: NotReady and
// tainted until the machine has booted.
func (f *Fleet) nodeObject(g *nodeGroup, m *machine) *corev1.Node {
	t := f.catalog[g.Size]
	labels := make(map[string]string, len(g.Labels)+4)
	for k, v := range g.Labels {
		labels[k] = v
	}
	labels[corev1.LabelInstanceTypeStable] = g.Size
	labels[corev1.LabelHostname] = m.Node
	labels[corev1.LabelOSStable] = "linux"
	labels[types.CapacityTypeLabel] = string(g.CapacityType.Or())
	if g.Zone != "" {
		labels[corev1.LabelTopologyZone] = g.Zone
	}
	// As sizing's node template for the size says, so pods planned onto a
	// size can bind to its nodes.
	labels[corev1.LabelArchStable] = t.Architecture()
	if t.GPUs > 0 && t.GPUModel != "" {
		labels[kubernetes.LabelGPUProduct] = sizing.GPUProduct(t.GPUModel)
	}
	capacity := t.Allocatable().Add(t.Overhead)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Node, Labels: labels,
			UID:               apitypes.UID("sim-node-" + m.ID),
			CreationTimestamp: metav1.NewTime(m.CreatedAt),
		},
		Spec: corev1.NodeSpec{
			ProviderID: f.providerID(m),
			Taints:     append([]corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}, groupTaints(g)...),
		},
		Status: corev1.NodeStatus{
			Capacity:    resourceList(capacity),
			Allocatable: resourceList(t.Allocatable()),
			Conditions:  []corev1.NodeCondition{readyCondition(false, m.CreatedAt)},
			Phase:       corev1.NodeRunning,
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: "v1.37.2-sim", OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

func readyCondition(ready bool, at time.Time) corev1.NodeCondition {
	c := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionFalse,
		Reason: "KubeletNotReady", Message: "machine is still booting",
		LastHeartbeatTime: metav1.NewTime(at), LastTransitionTime: metav1.NewTime(at),
	}
	if ready {
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"
	}
	return c
}

func (f *Fleet) registerNode(ctx context.Context, g *nodeGroup, m *machine) error {
	_, err := f.cs.CoreV1().Nodes().Create(ctx, f.nodeObject(g, m), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("register node %s: %w", m.Node, err)
	}
	return nil
}

// markReady flips a booted machine's node to Ready. It patches only the
// fields it owns, so a cordon or taint the drainer set meanwhile survives.
func (f *Fleet) markReady(ctx context.Context, node *corev1.Node, now time.Time) error {
	var taints []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			taints = append(taints, t)
		}
	}
	return f.patchReadiness(ctx, node.Name, taints, readyCondition(true, now))
}

// patchReadiness sets a node's taints and Ready condition by merge patch.
func (f *Fleet) patchReadiness(ctx context.Context, name string, taints []corev1.Taint, ready corev1.NodeCondition) error {
	patch := map[string]any{
		"spec":   map[string]any{"taints": taints},
		"status": map[string]any{"conditions": []corev1.NodeCondition{ready}},
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = f.cs.CoreV1().Nodes().Patch(ctx, name, apitypes.MergePatchType, b, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("set node %s ready=%s: %w", name, ready.Status, err)
	}
	return nil
}

// markNotReady is the node lifecycle controller's view of a node whose
// kubelet stopped posting status: Ready Unknown and an unreachable taint,
// so nothing new is scheduled there. Pods already bound stay.
func (f *Fleet) markNotReady(ctx context.Context, node *corev1.Node, now time.Time) error {
	taints := []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}}
	for _, t := range node.Spec.Taints {
		if t.Key != corev1.TaintNodeUnreachable {
			taints = append(taints, t)
		}
	}
	cond := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
		Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status (simulated fault).",
		LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
	}
	return f.patchReadiness(ctx, node.Name, taints, cond)
}

// deleteNode removes a Node object and the pods bound to it, as the cloud
// node lifecycle controller and the pod garbage collector would.
func (f *Fleet) deleteNode(ctx context.Context, name string) error {
	err := f.cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete node %s: %w", name, err)
	}
	pods, err := f.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String(),
	})
	if err != nil {
		return fmt.Errorf("list pods of deleted node %s: %w", name, err)
	}
	for _, p := range pods.Items {
		if err := f.deletePod(ctx, &p); err != nil {
			return err
		}
	}
	return nil
}

func (f *Fleet) deletePod(ctx context.Context, p *corev1.Pod) error {
	err := f.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// groupTaints are the taints the pool declared for the group's nodes.
func groupTaints(g *nodeGroup) []corev1.Taint {
	out := make([]corev1.Taint, 0, len(g.Taints))
	for _, t := range g.Taints {
		out = append(out, t.Core())
	}
	return out
}
