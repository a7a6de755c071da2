package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
)

// finalMeter is the truth after every pool was deregistered at the end of
// the final run: each pool's last meter billed the hour in progress, so
// the ledger holds every hour the pools lived, and the sims' records hold
// every machine the pools had, each with its creation and end.
type finalMeter struct {
	Ledger []meterledger.Row
	Sims   map[string]simTruth
	ReadAt time.Time
	// Failures are pools that did not deregister and complete in time.
	Failures []string
}

// deregisterTimeout bounds the wait for one pool's deregistration (drain
// every node, release, final meter).
const deregisterTimeout = 3 * time.Minute

// deregisterAll deregisters every pool of the spec, waits for each
// workflow to complete, and reads the ledger and the sims' records.
func deregisterAll(ctx context.Context, c client.Client, dataDir string, spec starter.SpecFile, logf func(string, ...any)) (finalMeter, error) {
	var out finalMeter
	keys := poolKeys(spec)
	for _, k := range keys {
		uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := starter.DeregisterPool(uctx, c, k, contract.DeregisterRequest{Reason: "chaos: final meter", RequestedBy: "chaos"})
		cancel()
		if err != nil {
			out.Failures = append(out.Failures, fmt.Sprintf("%s: deregister: %v", k.WorkflowID(), err))
		}
	}
	for _, k := range keys {
		wctx, cancel := context.WithTimeout(ctx, deregisterTimeout)
		err := c.GetWorkflow(wctx, k.WorkflowID(), "").Get(wctx, nil)
		cancel()
		if err != nil {
			out.Failures = append(out.Failures, fmt.Sprintf("%s: did not complete: %v", k.WorkflowID(), err))
		}
	}
	logf("deregistered %d pools (%d failures); reading the ledger and the sims' machine records", len(keys), len(out.Failures))
	var err error
	if out.Ledger, err = readLedger(ctx, filepath.Join(dataDir, "meter.db")); err != nil {
		return out, err
	}
	out.ReadAt = time.Now()
	out.Sims, err = readSimTruth(dataDir, clusterIDs(spec))
	return out, err
}

// meterTolerance is how far one ledger row may be from the provider's
// machine time: a machine whose end the provider does not report (a
// deleted group's) is billed to the pool's next read, a moment later.
const meterTolerance = 5 * time.Second

// meterKey names one (pool, size, hour).
type meterKey struct {
	pool, size string
	hour       time.Time
}

// providerMachineTime is the machine time each pool's groups ran per
// size and UTC hour, from the sims' records: live machines up to when the
// records were read, ended ones from creation to end. It also returns
// the time before which a sim's record is incomplete (it dropped older
// ended machines), per cluster.
func providerMachineTime(fm finalMeter) (map[meterKey]time.Duration, map[string]time.Time) {
	out := map[meterKey]time.Duration{}
	add := func(pool, size string, from, to time.Time) {
		from, to = from.UTC(), to.UTC()
		for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
			lo, hi := from, to
			if h.After(lo) {
				lo = h
			}
			if end := h.Add(time.Hour); end.Before(hi) {
				hi = end
			}
			if hi.After(lo) {
				out[meterKey{pool, size, h}] += hi.Sub(lo)
			}
		}
	}
	incomplete := map[string]time.Time{}
	for id, s := range fm.Sims {
		incomplete[id] = s.Inventory.EndedFrom
		for _, g := range s.Inventory.Groups {
			for _, m := range g.Group.Instances {
				add(g.Pool.WorkflowID(), g.Group.Size, m.CreatedAt, fm.ReadAt)
			}
		}
		for _, e := range s.Inventory.Ended {
			add(e.Pool.WorkflowID(), e.Size, e.Instance.CreatedAt, e.Instance.EndedAt)
		}
	}
	return out, incomplete
}

// checkLedgerMachineTime: every node-hours row equals the machine time
// the provider ran for that pool, size and hour, within meterTolerance,
// and every (pool, size, hour) the provider ran machines in has a row.
func checkLedgerMachineTime(t truth) result {
	r := result{Name: "ledger rows equal the provider's machine time"}
	fm := t.Final
	if fm == nil {
		r.fail("the pools were not deregistered at the end, so no ledger covers the run")
		return r
	}
	for _, f := range fm.Failures {
		r.fail("%s", f)
	}
	want, incomplete := providerMachineTime(*fm)
	got := map[meterKey]float64{}
	for _, row := range fm.Ledger {
		if row.MeterID != metering.MeterNodeHours {
			continue
		}
		got[meterKey{row.PoolID, row.Size, row.Hour.UTC()}] += row.Value
	}
	keys := map[meterKey]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	cluster := map[string]string{}
	for _, p := range t.Spec.Pools {
		cluster[p.Key.WorkflowID()] = p.Key.Cluster
	}
	for _, k := range slices.SortedFunc(maps.Keys(keys), compareMeterKeys) {
		if from := incomplete[cluster[k.pool]]; !from.IsZero() && !k.hour.After(from) {
			continue // the sim no longer holds every machine of this hour
		}
		r.Checked++
		billed := time.Duration(math.Round(got[k] * float64(time.Hour)))
		ran := want[k]
		if d := billed - ran; d > meterTolerance || d < -meterTolerance {
			r.fail("%s size %s hour %s: ledger %s, provider ran %s (%+.1f s)", k.pool, k.size, k.hour.Format("2006-01-02T15"), billed.Round(time.Millisecond), ran.Round(time.Millisecond), d.Seconds())
		}
	}
	return r
}

// meterFigures sums the ledger and the provider's machine time over the
// run, and the largest difference on one row, for the report.
func meterFigures(t truth) (ledger, provider, worst time.Duration, rows int) {
	if t.Final == nil {
		return 0, 0, 0, 0
	}
	want, _ := providerMachineTime(*t.Final)
	got := map[meterKey]time.Duration{}
	for _, row := range t.Final.Ledger {
		if row.MeterID == metering.MeterNodeHours {
			got[meterKey{row.PoolID, row.Size, row.Hour.UTC()}] += time.Duration(math.Round(row.Value * float64(time.Hour)))
			rows++
		}
	}
	for k, d := range got {
		ledger += d
		worst = max(worst, absDuration(d-want[k]))
	}
	for k, d := range want {
		provider += d
		if _, ok := got[k]; !ok {
			worst = max(worst, d)
		}
	}
	return ledger, provider, worst, rows
}

func compareMeterKeys(a, b meterKey) int {
	return cmp.Or(cmp.Compare(a.pool, b.pool), cmp.Compare(a.size, b.size), a.hour.Compare(b.hour))
}

func absDuration(d time.Duration) time.Duration { return max(d, -d) }
