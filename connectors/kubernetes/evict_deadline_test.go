package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/visor-fleet/connectors"
)

// TestEvictionCallIsBoundedByTheDrainDeadline serves the Kubernetes API
// over loopback and answers every eviction with 429 and Retry-After: 10,
// as a PDB whose status is not observed yet does. client-go retries such
// answers by itself, up to ten times; the drain must still stop at its
// deadline, uncordon the node and report the pod that stayed.
func TestEvictionCallIsBoundedByTheDrainDeadline(t *testing.T) {
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	pod := newPod("shop", "web-1", onNode("n1"), ownedBy("ReplicaSet"))
	pod.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	var evictions, uncordoned atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/eviction"):
			evictions.Add(1)
			w.Header().Set("Retry-After", "10")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
				Reason: metav1.StatusReasonTooManyRequests, Code: 429, Message: "Cannot evict pod as it would violate the pod's disruption budget."})
		case r.URL.Path == "/api/v1/nodes/n1" && r.Method == http.MethodPatch:
			var patch map[string]any
			_ = json.NewDecoder(r.Body).Decode(&patch)
			if spec, _ := patch["spec"].(map[string]any); spec != nil {
				if u, ok := spec["unschedulable"]; ok && (u == nil || u == false) {
					uncordoned.Add(1)
					node.Spec.Unschedulable = false
				} else {
					node.Spec.Unschedulable = true
				}
			}
			if md, _ := patch["metadata"].(map[string]any); md != nil {
				if ann, _ := md["annotations"].(map[string]any); ann != nil {
					if node.Annotations == nil {
						node.Annotations = map[string]string{}
					}
					for k, v := range ann {
						if s, ok := v.(string); ok {
							node.Annotations[k] = s
						} else {
							delete(node.Annotations, k)
						}
					}
				}
			}
			_ = json.NewEncoder(w).Encode(node)
		case r.URL.Path == "/api/v1/nodes/n1":
			_ = json.NewEncoder(w).Encode(node)
		case r.URL.Path == "/api/v1/pods":
			_ = json.NewEncoder(w).Encode(corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{*pod}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	client, err := k8s.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err = NewDrainer(client, DrainerConfig{}).Drain(context.Background(), "n1", connectors.DrainOptions{
		Deadline: start.Add(2 * time.Second), EvictionRetry: 100 * time.Millisecond,
	})
	took := time.Since(start)
	if !errors.Is(err, ErrDrainDeadline) {
		t.Fatalf("err = %v, want the drain deadline", err)
	}
	if took > 6*time.Second {
		t.Fatalf("drain took %s past a 2s deadline: the eviction call was not bounded", took)
	}
	if evictions.Load() == 0 {
		t.Fatal("no eviction was attempted")
	}
	if uncordoned.Load() == 0 || node.Spec.Unschedulable {
		t.Fatal("node left cordoned after the deadline")
	}
	if !strings.Contains(err.Error(), "shop/web-1") {
		t.Errorf("error %q does not name the pod that stayed", err)
	}
}
