package workflows

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/types"
)

// meterStart is an hour boundary, so every expected value is exact.
var meterStart = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// wantRow is one ledger row as the test expects it.
type wantRow struct {
	hour  int // UTC hour of meterStart's day
	meter string
	tier  contract.BillingTier
	value float64
	// nodeHours is the informational dimension of a pool-hours row.
	nodeHours string
}

// runMeteredPool runs one pool from meterStart over 3h30m of skipped time
// with 2 nodes, 3 from 11:30, 1 from 12:15, and the gates given (offset
// from the start → tier), reporting into its own SQLite ledger. The first
// report of every hour loses its answer after the write, so every hour is
// retried. It returns the ledger's rows and the pool's last status.
func runMeteredPool(t *testing.T, gates map[time.Duration]contract.BillingTier) ([]meterledger.Row, contract.PoolStatus) {
	t.Helper()
	ledger, err := meterledger.Open(filepath.Join(t.TempDir(), "meter.db"))
	require.NoError(t, err)
	t.Cleanup(func() { ledger.Close() })

	p := types.DefaultPolicy()
	p.MinNodes = 0
	p.ResyncInterval = types.Duration(time.Hour)
	env, w := newTestPool(t, p, nodesN(2))
	env.SetStartTime(meterStart)
	attempts := map[string]int{}
	w.report = func(ctx context.Context, events []metering.Event) error {
		if err := ledger.Report(ctx, events); err != nil {
			return err
		}
		if attempts[events[0].Idempotency]++; attempts[events[0].Idempotency] == 1 {
			return errclass.New(errclass.Retryable, "ledger", "report", errors.New("answer lost after the write"))
		}
		return nil
	}
	for at, tier := range gates {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(contract.SignalClusterGate, contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true, Tier: tier, Since: env.Now()})
		}, at)
	}
	setNodes := func(n int) func() {
		return func() {
			w.mu.Lock()
			w.setNodesLocked(nodesN(n))
			w.target = n
			w.mu.Unlock()
			w.signal()
		}
	}
	env.RegisterDelayedCallback(setNodes(3), 90*time.Minute)
	env.RegisterDelayedCallback(setNodes(1), 135*time.Minute)
	var last contract.PoolStatus
	env.RegisterDelayedCallback(func() { last = status(t, env) }, 210*time.Minute-time.Second)
	finish(env, 210*time.Minute)
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(p)})
	require.NoError(t, env.GetWorkflowError())
	rows, err := ledger.List(context.Background(), meterledger.Filter{})
	require.NoError(t, err)
	return rows, last
}

func nodesN(n int) []types.NodeObservation {
	var out []types.NodeObservation
	for i := range n {
		out = append(out, node(string(rune('a'+i)), 0.9, 0.9))
	}
	return out
}

func requireRows(t *testing.T, want []wantRow, got []meterledger.Row) {
	t.Helper()
	require.Len(t, got, len(want), "rows: %+v", got)
	for i, w := range want {
		r := got[i]
		hour := meterStart.Add(time.Duration(w.hour-10) * time.Hour)
		require.Equal(t, hour, r.Hour, "row %d", i)
		require.Equal(t, w.meter, r.MeterID, "row %d (%s)", i, r.Idempotency)
		require.Equal(t, w.tier, r.Tier, "row %d (%s)", i, r.Idempotency)
		require.InDelta(t, w.value, r.Value, 1e-9, "row %d (%s)", i, r.Idempotency)
		require.Equal(t, "acme", r.UserID)
		require.Equal(t, "web", r.Project)
		require.Equal(t, key().WorkflowID(), r.PoolID)
		require.Equal(t, "sim", r.Provider)
		require.Equal(t, "east", r.Cluster)
		if w.meter == metering.MeterNodeHours {
			require.Equal(t, "sim-4c8g", r.Size)
			require.Equal(t, metering.IdempotencyKey(key(), "sim-4c8g", hour), r.Idempotency)
		} else {
			require.Empty(t, r.Size)
			require.Equal(t, metering.PoolHoursKey(key(), hour), r.Idempotency)
			require.Equal(t, w.nodeHours, r.Dimensions[metering.DimNodeHours], "row %d: the nodes that ran", i)
		}
	}
}

// One managed pool and one BYO pool with the same nodes over the same
// hours: the managed ledger bills each hour's node-hours, the BYO ledger
// one management-plane pool-hour per hour (the last one half, as the pool
// deregisters at 13:30) carrying the node-hours for information only.
func TestManagedAndBYOPoolsMeterExactlyTheirRows(t *testing.T) {
	managed, st := runMeteredPool(t, map[time.Duration]contract.BillingTier{time.Second: contract.TierManaged})
	require.Equal(t, contract.TierManaged, st.Tier)
	requireRows(t, []wantRow{
		{hour: 10, meter: metering.MeterNodeHours, tier: contract.TierManaged, value: 2},
		{hour: 11, meter: metering.MeterNodeHours, tier: contract.TierManaged, value: 2.5},
		{hour: 12, meter: metering.MeterNodeHours, tier: contract.TierManaged, value: 1.5},
		{hour: 13, meter: metering.MeterNodeHours, tier: contract.TierManaged, value: 0.5},
	}, managed)

	byo, st := runMeteredPool(t, map[time.Duration]contract.BillingTier{time.Second: contract.TierBYO})
	require.Equal(t, contract.TierBYO, st.Tier)
	requireRows(t, []wantRow{
		{hour: 10, meter: metering.MeterPoolHours, tier: contract.TierBYO, value: 1, nodeHours: "2"},
		{hour: 11, meter: metering.MeterPoolHours, tier: contract.TierBYO, value: 1, nodeHours: "2.5"},
		{hour: 12, meter: metering.MeterPoolHours, tier: contract.TierBYO, value: 1, nodeHours: "1.5"},
		{hour: 13, meter: metering.MeterPoolHours, tier: contract.TierBYO, value: 0.5, nodeHours: "0.5"},
	}, byo)
}

// A pool whose cluster moves from managed to BYO at 11:40 bills hour 11
// once, as managed (the tier that held when it began), and every hour
// after as BYO; the change is a decision.
func TestTierChangeBillsEachHourOnceUnderTheTierThatHeld(t *testing.T) {
	rows, st := runMeteredPool(t, map[time.Duration]contract.BillingTier{
		time.Second: contract.TierManaged, 100 * time.Minute: contract.TierBYO,
	})
	requireRows(t, []wantRow{
		{hour: 10, meter: metering.MeterNodeHours, tier: contract.TierManaged, value: 2},
		{hour: 11, meter: metering.MeterNodeHours, tier: contract.TierManaged, value: 2.5},
		{hour: 12, meter: metering.MeterPoolHours, tier: contract.TierBYO, value: 1, nodeHours: "1.5"},
		{hour: 13, meter: metering.MeterPoolHours, tier: contract.TierBYO, value: 0.5, nodeHours: "0.5"},
	}, rows)
	require.Equal(t, contract.TierBYO, st.Tier)
	require.Equal(t, meterStart.Add(100*time.Minute), st.TierSince)
	var change *contract.DecisionRecord
	for i := range st.Decisions {
		if st.Decisions[i].Action == "tier-change" {
			require.Nil(t, change, "one change, one decision")
			change = &st.Decisions[i]
		}
	}
	require.NotNil(t, change, "the tier change was not recorded as a decision: %+v", st.Decisions)
	require.Equal(t, "cluster east is billed as byo (was managed)", change.Reason)
	require.Equal(t, "hours from 2026-03-01T12 are metered as byo; the hour in progress stays managed", change.Outcome)
	require.Equal(t, meterStart.Add(100*time.Minute), change.At)
}

// A client cannot make a managed pool BYO: with trust configured a gate
// signal's content is never taken (the pool reads the gate from its
// cluster, which says managed), so a forged "byo" gate leaves the pool
// managed and billing node-hours.
func TestForgedGateCannotMakeAManagedPoolBYO(t *testing.T) {
	p := types.DefaultPolicy()
	p.MinNodes = 0
	env, w := newTestPool(t, p, nodesN(2))
	env.SetStartTime(meterStart)
	tr := newTrusted(t, env.Now())
	UseTrust(&tr.trust)
	defer UseTrust(nil)
	env.OnActivity(a.Trust, mock.Anything).Return(tr.trust, nil)
	// The tenant's own worker serves the pool's provider queue; the gate
	// (and so the billing tier) must still come from the platform's.
	sp := spec(p)
	sp.ProviderTaskQueue = "tenant-acme"
	var gateQueues []string
	env.OnActivity(a.ReadClusterGate, mock.Anything, mock.Anything).Return(func(ctx context.Context, _ string) (contract.ClusterGate, error) {
		gateQueues = append(gateQueues, activity.GetInfo(ctx).TaskQueue)
		return contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true, Tier: contract.TierManaged, Since: env.Now()}, nil
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.SignalClusterGate, contract.ClusterGate{Phase: contract.PhaseActive, Reachable: true, Tier: contract.TierBYO, Since: env.Now()})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		st := status(t, env)
		require.Equal(t, contract.TierManaged, st.Tier, "a forged gate moved the pool's tier")
		for _, d := range st.Decisions {
			require.NotEqual(t, "tier-change", d.Action)
		}
	}, 50*time.Minute)
	env.RegisterDelayedCallback(func() {
		req := contract.DeregisterRequest{Reason: "test over"}
		a, err := auth.SignRequest(tr.alice, key().WorkflowID(), contract.UpdateDeregister, req, env.Now())
		require.NoError(t, err)
		req.Auth = &a
		env.UpdateWorkflow(contract.UpdateDeregister, "finish", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("deregister refused: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, req)
	}, 55*time.Minute) // alice's credential lasts an hour
	env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: sp})
	require.NoError(t, env.GetWorkflowError())
	require.NotEmpty(t, gateQueues)
	for _, q := range gateQueues {
		require.NotEqual(t, "tenant-acme", q, "the cluster gate (billing tier) was read by the tenant's own worker")
	}
	require.NotEmpty(t, w.meterEvents)
	for _, e := range w.meterEvents {
		require.Equal(t, metering.MeterNodeHours, e.MeterID, e.Idempotency)
		require.Equal(t, contract.TierManaged, e.Tier)
	}
}

// Only a platform administrator moves a cluster's tier: an unsigned
// request and one from the cluster's own owner org are refused before
// they enter history and tell no pool; the administrator's reaches every
// pool in the gate.
func TestOnlyAnAdministratorSetsAClustersTier(t *testing.T) {
	env, rec := newTestCluster(t)
	issuer, err := auth.GenerateIssuer("issuer-1")
	require.NoError(t, err)
	trust := auth.Trust{Issuers: map[string]string{issuer.Kid: issuer.Public()}}
	UseTrust(&trust)
	defer UseTrust(nil)
	env.OnActivity(a.Trust, mock.Anything).Return(trust, nil)
	owner, err := auth.NewCredential(issuer, "alice@acme", []string{"acme"}, 2*time.Hour, env.Now())
	require.NoError(t, err)
	admin, err := auth.NewCredential(issuer, "ops@platform", []string{auth.AllOrgs}, 2*time.Hour, env.Now())
	require.NoError(t, err)
	sign := func(cred auth.Credential, req contract.SetTierRequest) contract.SetTierRequest {
		a, err := auth.SignRequest(cred, types.ClusterWorkflowID("east"), contract.UpdateSetTier, req, env.Now())
		require.NoError(t, err)
		req.Auth = &a
		return req
	}
	refused := map[string]string{}
	var accepted contract.ClusterStatus
	env.RegisterDelayedCallback(func() {
		watcherSees(env, true, "")
		registerPools(env)
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		before := rec.gateCount()
		for name, req := range map[string]contract.SetTierRequest{
			"unsigned":  {Tier: contract.TierBYO, Reason: "cheaper"},
			"owner":     sign(owner, contract.SetTierRequest{Tier: contract.TierBYO, Reason: "cheaper"}),
			"unknown":   sign(admin, contract.SetTierRequest{Tier: "free", Reason: "x"}),
			"same":      sign(admin, contract.SetTierRequest{Tier: contract.TierManaged, Reason: "x"}),
			"no-reason": sign(admin, contract.SetTierRequest{Tier: contract.TierBYO, Reason: " "}),
		} {
			env.UpdateWorkflow(contract.UpdateSetTier, name, &testsuite.TestUpdateCallback{
				OnReject: func(err error) { refused[name] = err.Error() }, OnAccept: func() { t.Errorf("%s accepted", name) }, OnComplete: func(any, error) {},
			}, req)
		}
		require.Equal(t, before, rec.gateCount(), "a refused tier change reached pools")
		require.Equal(t, contract.BillingTier(""), clusterStatus(t, env).Declared.Tier)
		env.UpdateWorkflow(contract.UpdateSetTier, "admin", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("the administrator's set-tier refused: %v", err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				accepted = v.(contract.ClusterStatus)
			},
		}, sign(admin, contract.SetTierRequest{Tier: contract.TierBYO, Reason: "moved to the tenant's account"}))
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		latest := map[string]contract.BillingTier{}
		for _, g := range rec.gates {
			latest[g.pool] = g.gate.Tier
		}
		require.Len(t, latest, len(clusterPools))
		for pool, tier := range latest {
			require.Equal(t, contract.TierBYO, tier, "pool %s did not hear the new tier", pool)
		}
	}, 20*time.Second)
	endCluster(env, time.Minute)
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(saClusterPhase.ValueSet("active"))))
	d := declared(contract.PhaseActive)
	d.Owner = "acme"
	env.ExecuteWorkflow(ClusterWorkflow, ClusterInput{Declared: d})
	requireCanceled(t, env)
	require.Contains(t, refused["unsigned"], "carries no authorization")
	require.Contains(t, refused["owner"], "a cluster's billing tier is set by a platform administrator only")
	require.Contains(t, refused["unknown"], `tier "free" is not one of managed, byo`)
	require.Contains(t, refused["same"], "is already managed")
	require.Contains(t, refused["no-reason"], "reason is empty")
	require.Equal(t, contract.TierBYO, accepted.Declared.Tier)
	require.NotNil(t, accepted.LastTierChange)
	change := *accepted.LastTierChange
	require.False(t, change.At.IsZero())
	change.At = time.Time{}
	require.Equal(t, contract.TierChange{From: contract.TierManaged, To: contract.TierBYO, Reason: "moved to the tenant's account",
		RequestedBy: "ops@platform"}, change)
}
