package kubernetes

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
)

// AnnotationCordonedAt marks a cordon this connector made (RFC 3339 time of
// the first cordon). It is what lets a drain undo its own cordon and leave
// an operator's alone, and what a resumed drain recognises as its own.
const AnnotationCordonedAt = "hanzo.ai/cordoned-at"

// Cordon marks the node unschedulable. Cordoning a cordoned node changes
// nothing, and a node an operator cordoned stays the operator's.
func (d *Drainer) Cordon(ctx context.Context, node string) error {
	if err := validateNodeName(node); err != nil {
		return err
	}
	n, err := d.getNode(ctx, node)
	if err != nil {
		return err
	}
	_, err = d.cordon(ctx, n)
	return err
}

// Uncordon makes the node schedulable again and drops the cordon mark.
func (d *Drainer) Uncordon(ctx context.Context, node string) error {
	if err := validateNodeName(node); err != nil {
		return err
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationCordonedAt: nil}},
		"spec":     map[string]any{"unschedulable": nil},
	}
	return d.patchNode(ctx, node, "uncordon node "+node, patch)
}

func (d *Drainer) getNode(ctx context.Context, node string) (*corev1.Node, error) {
	n, err := d.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil, classifyError("get node "+node, err)
	}
	return n, nil
}

// cordon cordons n unless it already is, and reports whether the cordon
// now in place is ours.
func (d *Drainer) cordon(ctx context.Context, n *corev1.Node) (owned bool, err error) {
	marked := ownsCordon(n)
	switch {
	case marked && n.Spec.Unschedulable:
		return true, nil
	case !marked && n.Spec.Unschedulable:
		return false, nil
	}
	stamp := n.Annotations[AnnotationCordonedAt]
	if stamp == "" {
		stamp = d.now().UTC().Format(time.RFC3339)
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationCordonedAt: stamp}},
		"spec":     map[string]any{"unschedulable": true},
	}
	if err := d.patchNode(ctx, n.Name, "cordon node "+n.Name, patch); err != nil {
		return false, err
	}
	return true, nil
}

func ownsCordon(n *corev1.Node) bool { return n.Annotations[AnnotationCordonedAt] != "" }

// patchNode sends a JSON merge patch: it touches only the named fields, so
// it never races other writers of the node.
func (d *Drainer) patchNode(ctx context.Context, node, op string, patch map[string]any) error {
	body, err := json.Marshal(patch)
	if err != nil {
		return classifyError(op, err)
	}
	_, err = d.client.CoreV1().Nodes().Patch(ctx, node, apitypes.MergePatchType, body, metav1.PatchOptions{})
	return classifyError(op, err)
}
