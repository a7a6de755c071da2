package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
)

// Field selectors the API server indexes for pods.
const (
	selectorNonTerminal = "status.phase!=Succeeded,status.phase!=Failed"
	fieldNodeName       = "spec.nodeName"
)

// listPageSize keeps each response bounded on large clusters.
const listPageSize = 500

// listPods lists pods in all namespaces page by page.
func listPods(ctx context.Context, client k8s.Interface, fieldSelector string) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	opts := metav1.ListOptions{FieldSelector: fieldSelector, Limit: listPageSize}
	for {
		page, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, classifyError("list pods ("+fieldSelector+")", err)
		}
		pods = append(pods, page.Items...)
		if page.Continue == "" {
			return pods, nil
		}
		opts.Continue = page.Continue
	}
}

// listNodes lists nodes matching a label selector page by page.
func listNodes(ctx context.Context, client k8s.Interface, labelSelector string) ([]corev1.Node, error) {
	var nodes []corev1.Node
	opts := metav1.ListOptions{LabelSelector: labelSelector, Limit: listPageSize}
	for {
		page, err := client.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, classifyError("list nodes ("+labelSelector+")", err)
		}
		nodes = append(nodes, page.Items...)
		if page.Continue == "" {
			return nodes, nil
		}
		opts.Continue = page.Continue
	}
}

// podsOnNode lists the node's pods that still run or may run.
func podsOnNode(ctx context.Context, client k8s.Interface, node string) ([]corev1.Pod, error) {
	return listPods(ctx, client, fieldNodeName+"="+node+","+selectorNonTerminal)
}
