package devstack

import (
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/examples"
	"github.com/hanzoai/visor-fleet/internal/kubeplane"
	"github.com/hanzoai/visor-fleet/starter"
)

// Without the binary cache, --kube stops at once and says how to build it.
func TestStartKubeWithoutBinariesNamesTheBuildScript(t *testing.T) {
	t.Setenv("VISOR_KUBE_CACHE", t.TempDir())
	spec, err := starter.ParseSpecFile("kube-pools.yaml", examples.KubePools)
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartKube(context.Background(), spec, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), kubeplane.BuildScript) || !strings.Contains(err.Error(), "kube-scheduler") {
		t.Fatalf("err = %v, want one naming the missing binaries and %s", err, kubeplane.BuildScript)
	}
}
