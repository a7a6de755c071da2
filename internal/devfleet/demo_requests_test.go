package devfleet_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/internal/devfleet"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// A `visor demo pods` request left in the data directory becomes that many
// pods of the pool's service on its simulated cluster (pending, with no
// node to hold them), then none again when a request asks for 0; a request
// for a cluster this dev stack does not simulate leaves its reason behind.
func TestDemoRequestsRunThePodsTheyAskFor(t *testing.T) {
	spec, err := starter.ParseSpecFile("pools.yaml", []byte(`
clusters:
  - {id: east, provider: sim}
pools:
  - key: {org: acme, project: web, service: api, provider: sim, cluster: east}
`))
	require.NoError(t, err)
	// Not t.TempDir: the running fleet may still save its state as the
	// test ends, and a failed cleanup would fail the test.
	dir, err := os.MkdirTemp("", "visor-demo-requests-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	fleet, err := devfleet.New(spec, devfleet.Options{StateDir: dir, ProvisionDelay: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet.Run(ctx, 20*time.Millisecond)

	pool := "pool/acme/web/api/sim/east"
	ask := func(pool string, count int) string {
		require.NoError(t, os.MkdirAll(devfleet.DemoDir(dir), 0o700))
		raw, err := json.Marshal(devfleet.DemoRequest{Pool: pool, Count: count, Requests: types.Resources{MilliCPU: 500, Memory: types.GiB}})
		require.NoError(t, err)
		path := devfleet.DemoRequestPath(dir, pool)
		require.NoError(t, os.WriteFile(path, raw, 0o600))
		return path
	}
	pods := func() int {
		list, err := fleet.Sims["east"].Clientset().CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "hanzo.ai/service=api"})
		require.NoError(t, err)
		return len(list.Items)
	}

	path := ask(pool, 3)
	require.Eventually(t, func() bool { return pods() == 3 }, 10*time.Second, 20*time.Millisecond, "three pods of the request")
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "a taken request is removed")
	ask(pool, 0)
	require.Eventually(t, func() bool { return pods() == 0 }, 10*time.Second, 20*time.Millisecond, "count 0 removes them")

	bad := ask("pool/acme/web/api/sim/west", 2)
	require.Eventually(t, func() bool {
		_, err := os.Stat(devfleet.DemoErrorPath(bad))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	msg, err := os.ReadFile(devfleet.DemoErrorPath(bad))
	require.NoError(t, err)
	require.Contains(t, string(msg), "cluster west is not a simulated cluster of this visor dev")
}
