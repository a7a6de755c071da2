package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// lostAnswer counts, among errors seen, the applied-then-failed ones.
const lostAnswer errclass.Class = "lost answer"

// retryUntilOK calls op with the same arguments (and so the same key)
// until it succeeds, as an activity's retry policy would, and returns the
// error classes it met on the way.
func retryUntilOK(t *testing.T, op func() error) map[errclass.Class]int {
	t.Helper()
	seen := map[errclass.Class]int{}
	for range 200 {
		err := op()
		if err == nil {
			return seen
		}
		var e *errclass.Error
		require.ErrorAs(t, err, &e, "every sim error is a *errclass.Error")
		require.False(t, errclass.IsPermanent(err), "unexpected permanent error: %v", err)
		seen[e.Class]++
		if strings.Contains(err.Error(), "answer was lost") {
			seen[lostAnswer]++
		}
		if e.Class == errclass.RateLimited {
			assert.Equal(t, 3*time.Second, e.RetryAfter, "rate limits carry the configured retry-after")
		}
	}
	t.Fatal("no success in 200 attempts")
	return nil
}

func TestRetriesUnderEachFaultNeverDoubleProvision(t *testing.T) {
	cases := []struct {
		name   string
		faults FaultConfig
		class  errclass.Class
	}{
		{"retryable", FaultConfig{RetryableRate: 0.6}, errclass.Retryable},
		{"rate limited", FaultConfig{RateLimitRate: 0.6, RetryAfter: 3 * time.Second}, errclass.RateLimited},
		{"succeeds but errors", FaultConfig{CreateSucceedsButErrorsRate: 0.7}, lostAnswer},
		{"all at once", FaultConfig{RetryableRate: 0.25, RateLimitRate: 0.25, RetryAfter: 3 * time.Second, CreateSucceedsButErrorsRate: 0.5}, lostAnswer},
	}
	const pools = 8
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, _ := newTestFleet(t, func(cfg *Config) { cfg.Faults = c.faults; cfg.Seed = 42 })
			ctx := context.Background()
			// Per operation, the fault classes met across all pools.
			met := map[string]map[errclass.Class]int{}
			tally := func(op string, seen map[errclass.Class]int) {
				if met[op] == nil {
					met[op] = map[errclass.Class]int{}
				}
				for class, n := range seen {
					met[op][class] += n
				}
			}
			for i := range pools {
				pool := testPool(fmt.Sprintf("svc%d", i))
				spec := connectors.NodeGroupSpec{Pool: pool, Size: "sim-2c4g", TargetSize: 3}
				key := func(seq int) connectors.IdempotencyKey {
					return connectors.IdempotencyKey(fmt.Sprintf("%s#%d", pool.WorkflowID(), seq))
				}
				var group connectors.NodeGroup
				tally("create", retryUntilOK(t, func() error {
					g, err := f.CreateNodeGroup(ctx, spec, key(1))
					group = g
					return err
				}))
				tally("set target", retryUntilOK(t, func() error { return f.SetTargetSize(ctx, group.ID, 5, key(2)) }))
				tally("delete", retryUntilOK(t, func() error {
					return f.DeleteNodes(ctx, group.ID, []string{group.Instances[0].Name}, key(3))
				}))
			}
			t.Logf("faults met: %v", met)
			for _, op := range []string{"create", "set target", "delete"} {
				assert.Positive(t, met[op][c.class], "%s met the fault", op)
			}

			require.NoError(t, f.SetFaults(FaultConfig{}))
			for i := range pools {
				groups, err := f.NodeGroups(ctx, testPool(fmt.Sprintf("svc%d", i)))
				require.NoError(t, err)
				require.Len(t, groups, 1, "exactly one group per pool")
				assert.Equal(t, 4, groups[0].TargetSize)
				assert.Len(t, groups[0].Instances, 4, "exactly the intended machines")
			}
			assert.Len(t, listNodes(t, f), 4*pools)
		})
	}
}

func TestLostAnswerLeavesTheChangeApplied(t *testing.T) {
	f, _ := newTestFleet(t, func(cfg *Config) { cfg.Faults = FaultConfig{CreateSucceedsButErrorsRate: 1} })
	ctx := context.Background()
	_, err := f.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-2c4g", TargetSize: 2}, "k1")
	require.Error(t, err)
	assert.Equal(t, errclass.Retryable, errclass.Of(err))
	assert.Len(t, listNodes(t, f), 2, "the create took effect although it answered an error")
}

func TestLostAnswerThenCrashRetryFindsTheGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	f, _ := newTestFleet(t, func(cfg *Config) {
		cfg.StatePath = path
		cfg.Faults = FaultConfig{CreateSucceedsButErrorsRate: 1}
	})
	ctx := context.Background()
	spec := connectors.NodeGroupSpec{Pool: testPool("web"), Size: "sim-2c4g", TargetSize: 2}
	_, err := f.CreateNodeGroup(ctx, spec, "k1")
	require.Error(t, err)

	// The worker and the fleet restart; the activity retries with its key.
	restarted, _ := newTestFleet(t, func(cfg *Config) { cfg.StatePath = path })
	g, err := restarted.CreateNodeGroup(ctx, spec, "k1")
	require.NoError(t, err)
	groups, err := restarted.NodeGroups(ctx, testPool("web"))
	require.NoError(t, err)
	require.Len(t, groups, 1)
	assert.Equal(t, groups[0].ID, g.ID)
	assert.Len(t, listNodes(t, restarted), 2)
}

func TestInsufficientCapacityLaunchesNothingAndSizingCanFallBack(t *testing.T) {
	f, _ := newTestFleet(t, func(cfg *Config) {
		cfg.Faults = FaultConfig{InsufficientCapacitySizes: []string{"sim-8c16g"}}
	})
	ctx := context.Background()
	pool := testPool("web")
	for range 3 { // retrying the same size keeps failing the same way
		_, err := f.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool, Size: "sim-8c16g", TargetSize: 2}, "k1")
		require.Error(t, err)
		assert.True(t, errclass.IsInsufficientCapacity(err))
		assert.Contains(t, err.Error(), "sim-8c16g")
	}
	assert.Empty(t, listNodes(t, f))
	groups, _ := f.NodeGroups(ctx, pool)
	assert.Empty(t, groups)

	g := createGroup(t, f, pool, "sim-4c8g", 2, "k2") // the next size
	groups, _ = f.NodeGroups(ctx, pool)
	assert.Len(t, groups, 1)
	assert.Len(t, listNodes(t, f), 2)

	// The size runs out later: raising fails and launches nothing, lowering works.
	require.NoError(t, f.SetFaults(FaultConfig{InsufficientCapacitySizes: []string{"sim-4c8g"}}))
	err := f.SetTargetSize(ctx, g.ID, 4, "k3")
	assert.True(t, errclass.IsInsufficientCapacity(err))
	assert.Len(t, listNodes(t, f), 2)
	require.NoError(t, f.SetTargetSize(ctx, g.ID, 1, "k4"))
	assert.Len(t, listNodes(t, f), 1)

	err = f.SetFaults(FaultConfig{InsufficientCapacitySizes: []string{"nope"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"nope" is not in the catalog`)
}

func TestFaultsAreDeterministicForASeed(t *testing.T) {
	classes := func() []errclass.Class {
		f, _ := newTestFleet(t, func(cfg *Config) {
			cfg.Seed = 7
			cfg.Faults = FaultConfig{RetryableRate: 0.3, RateLimitRate: 0.3}
		})
		var out []errclass.Class
		for range 20 {
			_, err := f.Catalog(context.Background())
			if err == nil {
				out = append(out, "ok")
			} else {
				out = append(out, errclass.Of(err))
			}
		}
		return out
	}
	a, b := classes(), classes()
	assert.Equal(t, a, b)
	assert.Contains(t, a, errclass.Retryable)
	assert.Contains(t, a, errclass.RateLimited)
	assert.Contains(t, a, errclass.Class("ok"))
}

func TestInvalidFaultConfigIsRefused(t *testing.T) {
	_, err := New(Config{Cluster: testCluster, Faults: FaultConfig{RetryableRate: 0.8, RateLimitRate: 0.5}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must not exceed 1")
	_, err = New(Config{Cluster: testCluster, Faults: FaultConfig{CreateSucceedsButErrorsRate: 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "faults.CreateSucceedsButErrorsRate")
}
