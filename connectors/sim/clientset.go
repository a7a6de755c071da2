package sim

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// newClientset builds the simulated API server: the fake clientset plus
// the server behaviour the fake skips and the observer and drainer rely
// on (eviction deleting pods under PodDisruptionBudgets, field and label
// selectors on lists and watches), and a count of writes, so the fleet saves and relists only on change.
func newClientset(writes *atomic.Uint64) *fake.Clientset {
	cs := fake.NewClientset()
	tracker := cs.Tracker()
	cs.PrependReactor("create", "pods", evictionReactor(tracker))
	cs.PrependReactor("list", "*", fieldSelectorListReactor(tracker))
	cs.PrependWatchReactor("*", selectorWatchReactor(tracker))
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
