package kubeapi

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Fixtures stand in for the kubelet and the scheduler, which the harness
// does not run: they create nodes that report Ready, bind pods, and write
// pod status through the status subresource, as those components would.

// Node is a Ready node with the given allocatable CPU ("4"), memory
// ("16Gi") and pod slots; capacity equals allocatable.
func Node(name, cpu, memory string, pods int, labels map[string]string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type:               corev1.NodeReady,
				Status:             corev1.ConditionTrue,
				Reason:             "KubeletReady",
				LastHeartbeatTime:  metav1.Now(),
				LastTransitionTime: metav1.Now(),
			}},
		},
	}
}

// CreateNode creates node with its status, as a kubelet registers one.
// (The API server keeps a node's status on create, and adds the
// not-ready:NoSchedule taint; no scheduler runs here to mind it.)
func CreateNode(ctx context.Context, client kubernetes.Interface, node *corev1.Node) (*corev1.Node, error) {
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create node %s: %w", node.Name, err)
	}
	return created, nil
}

// Pod is a one-container pod requesting cpu ("500m") and memory ("1Gi").
// Its termination grace period is 0: with no kubelet to confirm that
// containers stopped, a bound pod deleted with a grace period would stay
// "Terminating" for ever, while a real kubelet would remove it.
func Pod(namespace, name, cpu, memory string, labels map[string]string) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "visor.invalid/app:test",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(cpu),
					corev1.ResourceMemory: resource.MustParse(memory),
				}},
			}},
		},
	}
}

// EnsureNamespace creates namespace unless it exists.
func EnsureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// Bind assigns a pod to a node through the binding subresource, as the
// scheduler does.
func Bind(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, node string) error {
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind pod %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	return nil
}

// MarkUnschedulable writes PodScheduled=False/Unschedulable with the given
// transition time, as the scheduler does when no node fits.
func MarkUnschedulable(ctx context.Context, client kubernetes.Interface, namespace, name string, since time.Time, message string) error {
	return updatePodStatus(ctx, client, namespace, name, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodPending
		setPodCondition(st, corev1.PodCondition{
			Type:               corev1.PodScheduled,
			Status:             corev1.ConditionFalse,
			Reason:             corev1.PodReasonUnschedulable,
			Message:            message,
			LastTransitionTime: metav1.NewTime(since),
		})
	})
}

// MarkRunning writes the status a kubelet reports for a started pod:
// Running, scheduled, and Ready since the given time. Ready pods are what
// the disruption controller counts as healthy.
func MarkRunning(ctx context.Context, client kubernetes.Interface, namespace, name string, readySince time.Time) error {
	return updatePodStatus(ctx, client, namespace, name, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodRunning
		at := metav1.NewTime(readySince)
		if st.StartTime == nil {
			st.StartTime = &at
		}
		for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			setPodCondition(st, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
		}
	})
}

func updatePodStatus(ctx context.Context, client kubernetes.Interface, namespace, name string, change func(*corev1.PodStatus)) error {
	for {
		pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
		}
		change(&pod.Status)
		_, err = client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write status of pod %s/%s: %w", namespace, name, err)
		}
		return nil
	}
}

func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// StandInKubelet plays a kubelet's part in graceful deletion for the pods
// bound to node: a pod that has been terminating for `after` is removed
// (deleted with grace period 0 and a UID precondition, as a kubelet does
// once its containers stopped). It runs until ctx ends; the returned
// channel closes when it has.
func StandInKubelet(ctx context.Context, client kubernetes.Interface, node string, after time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			finishTerminating(ctx, client, node, after)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

func finishTerminating(ctx context.Context, client kubernetes.Interface, node string, after time.Duration) {
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return // ctx ended, or a transient error: the next tick retries
	}
	zero := int64(0)
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp == nil {
			continue
		}
		started := pod.DeletionTimestamp.Time
		if pod.DeletionGracePeriodSeconds != nil {
			started = started.Add(-time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
		}
		if time.Since(started) < after {
			continue
		}
		uid := pod.UID
		_ = client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero,
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
	}
}
