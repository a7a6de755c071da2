// Package kwok runs pools against the real kube-scheduler: etcd,
// kube-apiserver, kube-controller-manager (disruption, replicaset,
// daemonset and node lifecycle controllers), kube-scheduler and kwok from the binary cache
// (testsuite/kubeapi/build-binaries.sh), the embedded Temporal server and a
// worker whose kwok cluster buys Node objects kwok manages. Each case
// creates real workloads; kube-scheduler, not the project's code, decides
// where their pods go. Without the cache the suite is skipped, except in CI
// (CI=true), where it fails.
//
// The cases run in parallel (-test.parallel defaults to 10 here, not
// GOMAXPROCS): they mostly wait on the control plane, and one at a time
// would take minutes more.
package kwok

import (
	"flag"
	"os"
	"testing"

	"github.com/hanzoai/visor-fleet/testsuite/kubeapi"
)

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "10")
	}
	os.Exit(kubeapi.Main(m, kubeapi.Options{
		Scheduler:   true,
		Kwok:        true,
		Controllers: []string{"disruption", "replicaset", "daemonset"},
	}))
}
