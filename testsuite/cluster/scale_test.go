package cluster

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

// TestScaleOnPostgres measures the multi-process deployment with
// VISOR_CLUSTER_POOLS idle pools (the production policy): how long `visor
// pool apply` took, the CPU of each Temporal service, each worker and
// PostgreSQL over an idle window (VISOR_CLUSTER_IDLE_WINDOW, default 6m:
// longer than one 5-minute safety resync), the databases' growth per
// pool-day, then the decision latency when 5 % of the pools get a burst.
// Measurements, not a unit test: run by hand, late, on a quiet machine:
//
//	VISOR_CLUSTER_SCALE=1 VISOR_CLUSTER_POOLS=10000 go test -run '^TestScaleOnPostgres$' -v -timeout 120m ./testsuite/cluster/
func TestScaleOnPostgres(t *testing.T) {
	if os.Getenv("VISOR_CLUSTER_SCALE") != "1" {
		t.Skip("a measurement of tens of minutes: VISOR_CLUSTER_SCALE=1 runs it")
	}
	shape := FleetShape{Pools: testsuite.EnvInt(t, "VISOR_CLUSTER_POOLS", 1000, 1), TenantOrg: orgs[0], Idle: true}
	shape.Clusters = testsuite.EnvInt(t, "VISOR_CLUSTER_CLUSTERS", shape.Pools/1000+2, 2)
	window := testsuite.EnvDuration(t, "VISOR_CLUSTER_IDLE_WINDOW", 6*time.Minute)
	settle := testsuite.EnvDuration(t, "VISOR_CLUSTER_SETTLE", max(2*time.Minute, time.Duration(shape.Pools/1000)*30*time.Second))
	ctx := context.Background()

	d := Start(t, shape)
	t.Logf("scale: apply of %d pools took %s (%.0f pools/s) [load %s]", shape.Pools, d.ApplyTook.Round(100*time.Millisecond), float64(shape.Pools)/d.ApplyTook.Seconds(), loadAverage())
	time.Sleep(settle)

	cpu0, db0, at0 := d.cpuByProcess(t), d.databaseBytes(t), time.Now()
	time.Sleep(window)
	cpu1, db1, elapsed := d.cpuByProcess(t), d.databaseBytes(t), time.Since(at0)
	t.Logf("scale: idle window %s [load %s]", elapsed.Round(time.Second), loadAverage())
	var total time.Duration
	names := make([]string, 0, len(cpu1))
	for name := range cpu1 {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		used := cpu1[name] - cpu0[name]
		total += used
		t.Logf("scale: idle CPU %-28s %6.2f %% of a core", name, 100*used.Seconds()/elapsed.Seconds())
	}
	t.Logf("scale: idle CPU in all                      %6.2f %% of a core (%.1f µcore per pool)", 100*total.Seconds()/elapsed.Seconds(), 1e6*total.Seconds()/elapsed.Seconds()/float64(shape.Pools))
	resident := d.residentByProcess()
	for _, name := range names {
		if rss := resident[name]; rss > 0 {
			t.Logf("scale: resident memory %-28s %7.1f MiB", name, float64(rss)/(1<<20))
		}
	}
	perPoolDay := float64(24*time.Hour) / float64(elapsed) / float64(shape.Pools)
	for db, size := range db1 {
		t.Logf("scale: database %-20s %8.1f MiB, grew %7.1f KiB per pool-day", db, float64(size)/(1<<20), float64(size-db0[db])*perPoolDay/1024)
	}

	lat := d.burstLatency(ctx, t, 0.05)
	t.Logf("scale: burst on %d pools (5 %%): from demand to scale-up decision p50 %s, p99 %s, max %s (includes the 10 s pending threshold and up to one 30 s sample) [load %s]",
		len(lat), pct(lat, 0.5), pct(lat, 0.99), lat[len(lat)-1], loadAverage())
}

// cpuByProcess is the CPU every process of the deployment used so far,
// earlier incarnations included; PostgreSQL's with its backends.
func (d *Deployment) cpuByProcess(t *testing.T) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, p := range d.Services {
		out["temporal "+name] = p.cpuBefore + p.cpu()
	}
	for _, p := range append(d.Workers, d.Tenant) {
		out[p.name] = p.cpuBefore + p.cpu()
	}
	pid, err := d.PG.PostmasterPID()
	require.NoError(t, err)
	pg, err := treeCPU(pid)
	require.NoError(t, err)
	out["postgresql (all backends)"] = pg
	return out
}

// residentByProcess is each Temporal service's and worker's resident
// memory now (VmRSS), by the names cpuByProcess uses; PostgreSQL's is
// left out (its shared buffers count once in every backend).
func (d *Deployment) residentByProcess() map[string]int64 {
	out := map[string]int64{}
	for name, p := range d.Services {
		out["temporal "+name] = residentBytes(p.pid())
	}
	for _, p := range append(d.Workers, d.Tenant) {
		out[p.name] = residentBytes(p.pid())
	}
	return out
}

// databaseBytes is the on-disk size of Temporal's two databases.
func (d *Deployment) databaseBytes(t *testing.T) map[string]int64 {
	out := map[string]int64{}
	for _, db := range []string{"temporal", "temporal_visibility"} {
		n, err := d.PG.QueryInt(db, "SELECT pg_database_size(current_database())")
		require.NoError(t, err)
		out[db] = n
	}
	return out
}

// burstLatency gives share of the pools pending pods at once (the sim
// host's demand) and times each until its scale-up decision.
func (d *Deployment) burstLatency(ctx context.Context, t *testing.T, share float64) []time.Duration {
	n := max(1, int(float64(len(d.Spec.Pools))*share))
	step := len(d.Spec.Pools) / n
	if step%len(orgs) == 0 {
		// Pools take orgs in turn: a step that is a multiple of their
		// count would pick one org's pools only (all the tenant's).
		step++
	}
	var keys []types.PoolKey
	began := time.Now()
	for i := 0; i < len(d.Spec.Pools) && len(keys) < n; i += step {
		k := d.Spec.Pools[i].Key
		require.NoError(t, d.Fleet.Sims[k.Cluster].AddDemand(k, sim.DemandProfile{Shape: sim.ShapeSteady, Pods: 2, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}))
		keys = append(keys, k)
	}
	lat := map[types.PoolKey]time.Duration{}
	left := d.pollPools(ctx, keys, began.Add(10*time.Minute), func(k types.PoolKey, st contract.PoolStatus) bool {
		for _, rec := range st.Decisions {
			if rec.Action == actionScaleUp && rec.At.After(began) {
				lat[k] = rec.At.Sub(began)
				return true
			}
		}
		return false
	})
	if len(left) > 0 {
		// Say which, and what the first of them last decided, then give
		// the latency of the others: a figure, and a failure.
		byOrg := map[string]int{}
		for _, k := range left {
			byOrg[k.Org]++
		}
		st, err := starter.PoolStatus(ctx, d.Client, left[0])
		pending := 0
		if st.Observation != nil {
			pending = len(st.Observation.PendingPods)
		}
		t.Errorf("%d of %d pools never scaled up for their burst in 10 minutes (by org %v); %s: state %q, pending %d, last decisions %v (status error %v)",
			len(left), len(keys), byOrg, left[0].WorkflowID(), st.State, pending, lastDecisions(st, 3), err)
	}
	require.NotEmpty(t, lat, "no pool scaled up for its burst")
	out := make([]time.Duration, 0, len(lat))
	for _, l := range lat {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// lastDecisions is the pool's n latest decision records, briefly.
func lastDecisions(st contract.PoolStatus, n int) []string {
	var out []string
	for _, rec := range st.Decisions[max(0, len(st.Decisions)-n):] {
		out = append(out, fmt.Sprintf("%s %s: %s → %s", rec.At.UTC().Format("15:04:05"), rec.Action, rec.Reason, rec.Outcome))
	}
	return out
}

// actionScaleUp is the decision log's name for the law's scale-up (its
// Action; the string is the contract the status query shows).
const actionScaleUp = "scale-up"

func pct(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))].Round(100 * time.Millisecond)
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	var one, five, fifteen float64
	fmt.Sscan(string(b), &one, &five, &fifteen)
	return fmt.Sprintf("%.1f %.1f %.1f", one, five, fifteen)
}
