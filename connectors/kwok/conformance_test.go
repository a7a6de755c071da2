package kwok

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
)

// The provider against client-go's fake API server, which can apply a
// group record's create and lose its answer, or refuse it as an API
// server does. kwok reaches the API through the cluster's own kubeconfig,
// takes no credential reference, finds no leaks and sells no size out, so
// those rows are skipped.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		p, cs, _ := newTestProvider(t)
		var (
			mu      sync.Mutex
			lose    bool
			refusal error
		)
		cs.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case refusal != nil:
				return true, nil, refusal
			case lose:
				lose = false
				create := a.(k8stesting.CreateAction)
				if err := cs.Tracker().Create(corev1.SchemeGroupVersion.WithResource("configmaps"), create.GetObject(), create.GetNamespace()); err != nil {
					return true, nil, err
				}
				return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
			}
			return false, nil, nil
		})
		configMaps := corev1.Resource("configmaps")
		return conformance.Double{
			Provider: p,
			Spec:     connectors.NodeGroupSpec{Pool: pool, Size: "kwok-2c4g"},
			Machines: func(t *testing.T) int {
				list, err := cs.CoreV1().ConfigMaps(DefaultNamespace).List(t.Context(), metav1.ListOptions{LabelSelector: LabelGroup})
				require.NoError(t, err)
				n := 0
				for i := range list.Items {
					g, err := decodeRecord(&list.Items[i])
					require.NoError(t, err)
					if g.Pool == pool {
						n += len(g.Machines)
					}
				}
				return n
			},
			LoseAnswer: func(*testing.T) {
				mu.Lock()
				defer mu.Unlock()
				lose = true
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				mu.Lock()
				defer mu.Unlock()
				switch f {
				case conformance.Quota:
					// A ResourceQuota on the records' namespace.
					refusal = apierrors.NewForbidden(configMaps, "kwok-group", errors.New("exceeded quota: visor-kwok, requested: count/configmaps=1, used: count/configmaps=10, limited: count/configmaps=10"))
				case conformance.Capacity:
					return "kwok's machines are API objects: no size is ever out of stock"
				case conformance.Auth:
					refusal = apierrors.NewUnauthorized("Unauthorized")
				}
				return ""
			},
		}
	})
}
