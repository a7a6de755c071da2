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

// listPods lists pods in all namespaces.
func listPods(ctx context.Context, client k8s.Interface, fieldSelector string) ([]corev1.Pod, error) {
	return listAll(ctx, "list pods ("+fieldSelector+")",
		metav1.ListOptions{FieldSelector: fieldSelector},
		func(opts metav1.ListOptions) (*corev1.PodList, error) {
			return client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		},
		func(l *corev1.PodList) []corev1.Pod { return l.Items })
}

// listNodes lists nodes matching a label selector.
func listNodes(ctx context.Context, client k8s.Interface, labelSelector string) ([]corev1.Node, error) {
	return listAll(ctx, "list nodes ("+labelSelector+")",
		metav1.ListOptions{LabelSelector: labelSelector},
		func(opts metav1.ListOptions) (*corev1.NodeList, error) {
			return client.CoreV1().Nodes().List(ctx, opts)
		},
		func(l *corev1.NodeList) []corev1.Node { return l.Items })
}

// listAll follows continue tokens page by page.
func listAll[T any, L interface{ GetContinue() string }](
	ctx context.Context, op string, opts metav1.ListOptions,
	list func(metav1.ListOptions) (L, error), items func(L) []T,
) ([]T, error) {
	var all []T
	opts.Limit = listPageSize
	for {
		page, err := list(opts)
		if err != nil {
			return nil, classifyError(op, err)
		}
		all = append(all, items(page)...)
		if page.GetContinue() == "" {
			return all, nil
		}
		opts.Continue = page.GetContinue()
	}
}

// podsOnNode lists the node's pods that still run or may run.
func podsOnNode(ctx context.Context, client k8s.Interface, node string) ([]corev1.Pod, error) {
	return listPods(ctx, client, fieldNodeName+"="+node+","+selectorNonTerminal)
}
