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
// machine time the provider ran: here, each node's machine launched and
// terminated with it, the integral of the node count. The first report of every hour answers an
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
			var nodes []types.NodeObservation
			for i := range n {
				nodes = append(nodes, node(string(rune('a'+i)), 0.9, 0.9))
			}
			w.setNodesLocked(nodes)
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

// blindSpell runs a pool through a spell with no observation and no
// provider read (the worker is gone) from 17:55 to 19:30, while machines
// come and go at the provider, and returns the ledger's node-hours per
// hour and when each hour was reported. Node a runs from 17:50 to 18:40;
// node b runs 65 s from 18:20, entirely inside the spell.
func blindSpell(t *testing.T, noEndLog bool) (map[string]float64, map[string]time.Time) {
	t.Helper()
	ledger, err := meterledger.Open(filepath.Join(t.TempDir(), "meter.db"))
	require.NoError(t, err)
	defer ledger.Close()

	p := types.DefaultPolicy()
	p.MinNodes = 0
	env, w := newTestPool(t, p, nil)
	start := time.Date(2026, 3, 1, 17, 50, 0, 0, time.UTC)
	env.SetStartTime(start)
	reported := map[string]time.Time{}
	w.report = func(ctx context.Context, events []metering.Event) error {
		reported[events[0].Hour.Format("15")] = env.Now()
		return ledger.Report(ctx, events)
	}
	w.noEndLog = noEndLog
	at := func(hhmmss string, f func()) {
		clock, err := time.Parse("15:04:05", hhmmss)
		require.NoError(t, err)
		when := time.Date(2026, 3, 1, clock.Hour(), clock.Minute(), clock.Second(), 0, time.UTC)
		env.RegisterDelayedCallback(func() {
			w.mu.Lock()
			f()
			w.mu.Unlock()
		}, when.Sub(start))
	}
	a, b := node("a", 0.9, 0.9), node("b", 0.9, 0.9)
	w.mu.Lock()
	w.setNodesLocked([]types.NodeObservation{a})
	w.mu.Unlock()
	at("17:55:00", func() { w.down = true })
	at("18:20:00", func() { w.setNodesLocked([]types.NodeObservation{a, b}) })
	at("18:21:05", func() { w.setNodesLocked([]types.NodeObservation{a}) })
	at("18:40:00", func() { w.setNodesLocked(nil) })
	at("19:30:00", func() { w.down = false })
	finish(env, 2*time.Hour+20*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())

	rows, err := ledger.List(context.Background(), meterledger.Filter{})
	require.NoError(t, err)
	got := map[string]float64{}
	for _, r := range rows {
		require.Equal(t, "sim-4c8g", r.Size)
		hour := r.Hour.UTC().Format("15")
		require.NotContains(t, got, hour, "two rows for hour %s", hour)
		got[hour] = r.Value
	}
	return got, reported
}

// TestMeterBillsWhatTheProviderRanWhileBlind: observations and provider
// reads stop for 95 minutes (the worker is gone) while node a runs on and
// is deleted, and node b comes and goes unseen. Each hour's ledger row
// equals the provider's machine time to the nanosecond: 10 min of a in
// 17:00, 40 min of a and b's 65 s in 18:00, nothing after. No hour is
// billed before a provider read covering it was seen.
func TestMeterBillsWhatTheProviderRanWhileBlind(t *testing.T) {
	got, reported := blindSpell(t, false)
	require.Equal(t, map[string]float64{
		"17": (10 * time.Minute).Hours(),
		"18": (40*time.Minute + 65*time.Second).Hours(),
	}, got)
	back := time.Date(2026, 3, 1, 19, 30, 0, 0, time.UTC)
	for hour, when := range reported {
		require.False(t, when.Before(back), "hour %s billed at %s, while the provider was not read", hour, when.Format(time.RFC3339))
	}
}

// TestMeterWithoutAnEndLogBillsToTheFirstReadWithout: a provider that
// reports no ended machines. A machine listed alive and missing later is
// billed until the first read that no longer lists it, never less; one
// that came and went unseen cannot be known and is not billed.
func TestMeterWithoutAnEndLogBillsToTheFirstReadWithout(t *testing.T) {
	got, _ := blindSpell(t, true)
	require.Equal(t, (10 * time.Minute).Hours(), got["17"])
	// a was last listed before the spell and first missing after it:
	// it is billed through 18:00 into 19:00 up to that read.
	require.InDelta(t, 1.0, got["18"], 1e-9)
	require.GreaterOrEqual(t, got["19"], (30 * time.Minute).Hours())
	require.Less(t, got["19"], (40 * time.Minute).Hours())
}
