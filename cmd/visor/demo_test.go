package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/starter"
)

// `visor demo pods` hands a running dev fleet pods for a pool and says so
// once the fleet took them; what it cannot do is a clear error.
func TestDemoPodsRunsPodsOnTheDevFleet(t *testing.T) {
	// Not t.TempDir: the running fleet may still save its state as the
	// test ends, and a failed cleanup would fail the test.
	dir, err := os.MkdirTemp("", "visor-demo-pods-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "temporal.db"), nil, 0o600))
	spec, err := starter.ParseSpecFile("pools.yaml", []byte(`
clusters:
  - {id: east, provider: sim}
pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
`))
	require.NoError(t, err)
	fleet, err := devfleet.New(spec, devfleet.Options{StateDir: dir, ProvisionDelay: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet.Run(ctx, 20*time.Millisecond)

	out, _, err := visorWith(t, "demo", "pods", "pool/acme/web/api/sim/east", "--count", "4", "--cpu", "750m", "--memory", "2Gi", "--data-dir", dir)
	require.NoError(t, err)
	require.Contains(t, out, "pool/acme/web/api/sim/east: visor dev now runs 4 pods of 750m CPU, 2Gi memory")
	require.Eventually(t, func() bool {
		list, err := fleet.Sims["east"].Clientset().CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "hanzo.ai/service=api"})
		if err != nil || len(list.Items) != 4 {
			return false
		}
		cpu := list.Items[0].Spec.Containers[0].Resources.Requests.Cpu()
		return cpu.MilliValue() == 750
	}, 10*time.Second, 20*time.Millisecond)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pool/acme/web/api/aws/east"}, `demo pods runs on simulated clusters only (provider sim), not "aws"`},
		{[]string{"pool/acme/web/api/sim/east", "--cpu", "lots"}, `--cpu "lots" is not a Kubernetes quantity`},
		{[]string{"pool/acme/web/api/sim/east", "--memory", "0"}, `--memory "0" must be more than zero`},
		{[]string{"pool/acme/web/api/sim/east", "--count", "-1"}, "--count must not be negative"},
		{[]string{"pool/acme/web/api/sim/east", "--data-dir", t.TempDir()}, "holds no visor dev state (no temporal.db)"},
		{[]string{"pool/acme/web/api/sim/west"}, "visor dev refused the request: pool pool/acme/web/api/sim/west: cluster west is not a simulated cluster of this visor dev"},
	} {
		args := append([]string{"demo", "pods"}, c.args...)
		if len(c.args) == 1 || c.args[1] != "--data-dir" {
			args = append(args, "--data-dir", dir)
		}
		_, _, err := visorWith(t, args...)
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}
}
