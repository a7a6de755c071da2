package sim

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/visor-fleet/connectors/kubernetes/kubefake"
)

// newClientset builds the simulated API server: the fake clientset plus
// kubefake's server behaviour the observer and drainer rely on (field
// selectors, evictions that honour PodDisruptionBudgets and delete the
// pod), and a count of writes so the fleet saves and relists only on change.
func newClientset(writes *atomic.Uint64) *fake.Clientset {
	// The simple tracker, not NewClientset's field-managed one: that builds
	// a field manager per write (milliseconds each), and nothing here
	// needs server-side apply.
	cs := fake.NewSimpleClientset()
	kubefake.Install(cs, kubefake.Options{})
	// Prepended last so it runs first and sees every write, whoever makes it.
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete", "delete-collection":
			writes.Add(1)
		}
		return false, nil, nil
	})
	return cs
}
