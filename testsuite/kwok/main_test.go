// Package kwok runs pools against the real kube-scheduler: etcd,
// kube-apiserver, kube-controller-manager (disruption, replicaset and
// daemonset controllers), kube-scheduler and kwok from the binary cache
// (testsuite/kubeapi/build-binaries.sh), the embedded Temporal server and a
// worker whose kwok cluster buys Node objects kwok manages. Each case
// creates real workloads; kube-scheduler, not the project's code, decides
// where their pods go. Without the cache the suite is skipped, except in CI
// (CI=true), where it fails.
package kwok

import (
	"os"
	"testing"

	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

func TestMain(m *testing.M) {
	os.Exit(kubeapi.Main(m, kubeapi.Options{
		Scheduler:   true,
		Kwok:        true,
		Controllers: []string{"disruption", "replicaset", "daemonset"},
	}))
}
