package workflows

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/types"
)

// TestMeteringMatchesTheIntegralOfNodeCount drives a pool's node count
// through known changes over several hours of skipped time, reporting into
// a real SQLite ledger, and checks the ledger's node-hours equal the
// integral of the node count. The first report of every hour answers an
// error after writing (a lost answer), so each hour is retried: the ledger
// must still hold exactly one row per key.
func TestMeteringMatchesTheIntegralOfNodeCount(t *testing.T) {
	ledger, err := meterledger.Open(filepath.Join(t.TempDir(), "meter.db"))
	require.NoError(t, err)
	defer ledger.Close()

	p := types.DefaultPolicy()
	p.MinNodes = 0
	p.ResyncInterval = types.Duration(time.Hour)
	env, w := newTestPool(t, p, nil)
	attempts := map[string]int{}
	w.report = func(ctx context.Context, events []metering.Event) error {
		if err := ledger.Report(ctx, events); err != nil {
			return err
		}
		hour := events[0].Hour.Format(time.RFC3339)
		attempts[hour]++
		if attempts[hour] == 1 {
			return errclass.New(errclass.Retryable, "ledger", "report", errors.New("answer lost after the write"))
		}
		return nil
	}

	start := env.Now()
	// Node count over time, as offsets from the start: 2 nodes for 90 min,
	// 5 nodes for 45 min, 1 node for 105 min, then the pool is deregistered
	// (nodes drained) at 4h.
	steps := []struct {
		at    time.Duration
		nodes int
	}{{0, 2}, {90 * time.Minute, 5}, {135 * time.Minute, 1}}
	setNodes := func(n int) func() {
		return func() {
			w.mu.Lock()
			w.nodes = nil
			for i := range n {
				w.nodes = append(w.nodes, node(string(rune('a'+i)), 0.9, 0.9))
			}
			w.mu.Unlock()
			w.signal()
		}
	}
	for _, s := range steps {
		env.RegisterDelayedCallback(setNodes(s.nodes), s.at+time.Second)
	}
	finish(env, 4*time.Hour)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())

	// The integral from the first change to the deregistration, in hours.
	want := 0.0
	end := 4 * time.Hour
	for i, s := range steps {
		until := end
		if i+1 < len(steps) {
			until = steps[i+1].at
		}
		want += float64(s.nodes) * (until - s.at).Hours()
	}
	rows, err := ledger.List(context.Background(), meterledger.Filter{})
	require.NoError(t, err)
	got := 0.0
	keys := map[string]bool{}
	for _, r := range rows {
		require.False(t, keys[r.Idempotency], "two rows for %s", r.Idempotency)
		keys[r.Idempotency] = true
		got += r.Value
	}
	// The first change lands a second after the start and the drain at the
	// end takes a moment of workflow time: allow a few node-seconds.
	require.InDelta(t, want, got, 10.0/3600, "ledger node-hours %.4f, integral %.4f", got, want)
	require.GreaterOrEqual(t, len(rows), 4, "every hour with nodes is metered")
	for hour, n := range attempts {
		require.Equal(t, 2, n, "hour %s: each report retried once after the lost answer", hour)
	}
	_ = start
	require.False(t, math.IsNaN(got))
}
