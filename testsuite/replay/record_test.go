package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workflows"
)

// TestRecordHistories runs a scenario that exercises every path of the pool
// and cluster workflows on the embedded server and writes their histories
// to testdata/, for TestReplayHistories. Run it through `make replay-record`
// after a deliberate, versioned change to a workflow.
func TestRecordHistories(t *testing.T) {
	if os.Getenv("VISOR_RECORD_HISTORIES") != "1" {
		t.Skip("set VISOR_RECORD_HISTORIES=1 (make replay-record) to re-record the fixtures")
	}
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "sim-replay"}
	// Only the 2-CPU size, so the six pods need several nodes and the
	// scale-down path is recorded too (any size would fit them on one).
	policy := testsuite.FastPolicy()
	policy.AllowedSizes = []string{"sim-2c4g"}
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-replay", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
		Pools: []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: policy},
			Demo: &starter.DemoDemand{Shape: "steady", Pods: 6, Requests: types.Resources{MilliCPU: 900, Memory: types.GiB}}}},
	}
	s := testsuite.StartStack(t, spec, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// Every pod placed: plans count the DaemonSet room each node gives
	// its own pods, so the sim's 2-CPU nodes are bought in the number the
	// six pods need.
	testsuite.WaitForPool(t, s, key, 90*time.Second, "scaled up", func(st contract.PoolStatus) bool {
		return st.PendingPods == 0 && st.Nodes >= 2
	})
	must(t, s.Fleet.Sims["sim-replay"].AddDemand(key, sim.Steady(0, types.Resources{MilliCPU: 900, Memory: types.GiB})))
	testsuite.WaitForPool(t, s, key, 90*time.Second, "scaled down", func(st contract.PoolStatus) bool {
		return st.Nodes == 1
	})
	_, err := starter.ScalePool(ctx, s.Client, key, contract.ScaleRequest{Target: 3, Reason: "record", RequestedBy: "replay"})
	must(t, err)
	_, err = starter.ScalePool(ctx, s.Client, key, contract.ScaleRequest{Target: 0, Reason: "rejected"})
	if err == nil {
		t.Fatal("scale below the floor accepted")
	}
	testsuite.WaitForPool(t, s, key, 60*time.Second, "manual target", func(st contract.PoolStatus) bool { return st.Nodes == 3 })
	_, err = starter.PausePool(ctx, s.Client, key, contract.PauseRequest{Reason: "record"})
	must(t, err)
	must(t, s.Client.SignalWorkflow(ctx, key.WorkflowID(), "", contract.SignalForceScale, contract.ScaleRequest{Target: 99, Reason: "clamped"}))
	_, err = starter.ResumePool(ctx, s.Client, key, contract.PauseRequest{})
	must(t, err)
	p := policy
	p.MaxNodes = 5
	_, err = starter.SetPoolPolicy(ctx, s.Client, key, p)
	must(t, err)
	_, err = starter.SetClusterPhase(ctx, s.Client, "sim-replay", contract.SetPhaseRequest{Phase: contract.PhaseDraining, Reason: "record"})
	must(t, err)
	_, err = starter.SetClusterTier(ctx, s.Client, "sim-replay", contract.SetTierRequest{Tier: contract.TierBYO, Reason: "record"})
	must(t, err)
	token, _, err := starter.RotateClusterToken(ctx, s.Client, "sim-replay", "record", "replay")
	must(t, err)
	_, err = starter.ReportObserved(ctx, s.Client, "sim-replay", token, contract.ObservedReport{
		ClusterID: "sim-replay", ReportedAt: time.Now(), SyncState: contract.SyncConnected,
		Capabilities: contract.Capabilities{MIG: true}, AgentVersion: "1.0.0", Nodes: 3, Pools: 1,
	})
	must(t, err)
	time.Sleep(3 * time.Second)
	_, err = starter.DeregisterPool(ctx, s.Client, key, contract.DeregisterRequest{Reason: "record"})
	must(t, err)
	run := s.Client.GetWorkflow(ctx, key.WorkflowID(), "")
	must(t, run.Get(ctx, nil))

	tag := fixtureTag()
	// The stack encrypts payloads with keys that die with it: the
	// fixtures are written decrypted, so the replayer reads them as they
	// would be with the codec in front.
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	write(t, ctx, s.Client, pc, key.WorkflowID(), "pool-lifecycle-"+tag+".json")
	write(t, ctx, s.Client, pc, types.ClusterWorkflowID("sim-replay"), "cluster-lifecycle-"+tag+".json")
}

// TestRecordFreshStartState records a pool started with a carried state
// but no earlier run (the path PoolWorkflow guards: a tenant may
// start its own pool with any input), which ignores the state.
func TestRecordFreshStartState(t *testing.T) {
	if os.Getenv("VISOR_RECORD_HISTORIES") != "1" {
		t.Skip("set VISOR_RECORD_HISTORIES=1 (make replay-record) to re-record the fixtures")
	}
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "crafted", Provider: "sim", Cluster: "sim-fresh"}
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-fresh", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
	}
	s := testsuite.StartStack(t, spec, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	crafted := &workflows.PoolState{Policy: testsuite.FastPolicy(), Seq: 41, MeterCursor: time.Now().Add(365 * 24 * time.Hour).UTC().Truncate(time.Hour)}
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: key.WorkflowID(), TaskQueue: contract.DefaultTaskQueue},
		contract.PoolWorkflow, workflows.PoolInput{Spec: contract.PoolSpec{Key: key, Policy: testsuite.FastPolicy()}, State: crafted})
	must(t, err)
	testsuite.WaitForPool(t, s, key, 60*time.Second, "carried state ignored", func(st contract.PoolStatus) bool {
		return len(st.Decisions) > 0 && strings.Contains(st.Decisions[0].Outcome, "carried state ignored")
	})
	_, err = starter.DeregisterPool(ctx, s.Client, key, contract.DeregisterRequest{Reason: "record"})
	must(t, err)
	must(t, s.Client.GetWorkflow(ctx, key.WorkflowID(), "").Get(ctx, nil))
	tag := fixtureTag()
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	write(t, ctx, s.Client, pc, key.WorkflowID(), "pool-fresh-start-state-"+tag+".json")
}

// TestRecordClusterFanout records a cluster with more pools than one
// gate fan-out batch (pools registered by signal, most never started, as
// pools that are gone) telling them a phase change in batches.
func TestRecordClusterFanout(t *testing.T) {
	if os.Getenv("VISOR_RECORD_HISTORIES") != "1" {
		t.Skip("set VISOR_RECORD_HISTORIES=1 (make replay-record) to re-record the fixtures")
	}
	spec := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: "sim-fanout", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east", SampleInterval: types.Duration(time.Second)}},
	}
	s := testsuite.StartStack(t, spec, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	id := types.ClusterWorkflowID("sim-fanout")
	const pools = 520 // more than one batch, few enough for one run
	for i := range pools {
		key := types.PoolKey{Org: fmt.Sprintf("org%04d", i), Project: "shop", Service: "api", Provider: "sim", Cluster: "sim-fanout"}
		must(t, s.Client.SignalWorkflow(ctx, id, "", contract.SignalPoolRegistered, contract.PoolRegistration{PoolID: key.WorkflowID(), Thresholds: contract.PoolThresholds{IdleCPU: 0.3, IdleMemory: 0.4}}))
	}
	waitForCluster(t, ctx, s.Client, "every pool registered", func(st contract.ClusterStatus) bool { return len(st.Pools) == pools })
	_, err := starter.SetClusterPhase(ctx, s.Client, "sim-fanout", contract.SetPhaseRequest{Phase: contract.PhaseDraining, Reason: "record"})
	must(t, err)
	// Every pool told on joining and on the phase change, each signal
	// answered (not found): the phase change by the cluster's own signals
	// or, since changeGateActivity, by one FanOutGate activity. The
	// registrations alone can take the run past its event budget, so the
	// fan-out may span runs: the fixture is the run that ran FanOutGate to
	// completion, else the one that sent the most signals.
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	var fanoutRun string
	waitForRuns(t, ctx, s.Client, id, func(runs map[string]*historypb.History) bool {
		total, most, byActivity := 0, 0, ""
		fanoutRun = ""
		for run, h := range runs {
			n, scheduled := 0, map[int64]bool{}
			for _, e := range h.Events {
				if e.GetSignalExternalWorkflowExecutionFailedEventAttributes() != nil || e.GetExternalWorkflowExecutionSignaledEventAttributes() != nil {
					n++
				}
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "FanOutGate" {
					scheduled[e.GetEventId()] = true
				}
				if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
					byActivity = run
				}
			}
			total += n
			if n > most {
				most, fanoutRun = n, run
			}
		}
		if byActivity != "" {
			fanoutRun = byActivity
			return total >= pools
		}
		return total >= 2*pools && fanoutRun != ""
	})
	tag := fixtureTag()
	writeRun(t, ctx, s.Client, pc, id, fanoutRun, "cluster-fanout-"+tag+".json")
}

// fixtureTag names this recording's fixtures (VISOR_RECORD_TAG, else the
// time). Fixtures accumulate: each recording keeps the histories of earlier
// code, so a change must replay all of them.
func fixtureTag() string {
	if tag := os.Getenv("VISOR_RECORD_TAG"); tag != "" {
		return tag
	}
	return time.Now().UTC().Format("20060102-1504")
}

func waitForCluster(t *testing.T, ctx context.Context, c client.Client, what string, ok func(contract.ClusterStatus) bool) {
	t.Helper()
	for {
		st, err := starter.ClusterStatus(ctx, c, "sim-fanout")
		if err == nil && ok(st) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cluster never %s: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitForRuns polls every run of the workflow (by visibility) until ok.
func waitForRuns(t *testing.T, ctx context.Context, c client.Client, id string, ok func(map[string]*historypb.History) bool) {
	t.Helper()
	for {
		runs := map[string]*historypb.History{}
		var token []byte
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id), NextPageToken: token})
			must(t, err)
			for _, ex := range resp.GetExecutions() {
				h := &historypb.History{}
				it := c.GetWorkflowHistory(ctx, id, ex.GetExecution().GetRunId(), false, 0)
				for it.HasNext() {
					e, err := it.Next()
					must(t, err)
					h.Events = append(h.Events, e)
				}
				runs[ex.GetExecution().GetRunId()] = h
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		if ok(runs) {
			return
		}
		select {
		case <-ctx.Done():
			kinds := map[string]int{}
			for _, h := range runs {
				for _, e := range h.Events {
					kinds[e.GetEventType().String()]++
				}
			}
			t.Fatalf("the fan-out never finished: %d runs, %v", len(runs), kinds)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// write saves the history with its payloads decrypted, so the fixture
// replays with the default data converter and needs no key.
func write(t *testing.T, ctx context.Context, c client.Client, pc *codec.PayloadCodec, id, name string) {
	t.Helper()
	writeRun(t, ctx, c, pc, id, "", name)
}

// writeRun is write for one run ("" is the latest).
func writeRun(t *testing.T, ctx context.Context, c client.Client, pc *codec.PayloadCodec, id, runID, name string) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, runID, false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		must(t, err)
		must(t, proxy.VisitPayloads(ctx, e, proxy.VisitPayloadsOptions{
			Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
				return pc.Decode(p)
			},
		}))
		h.Events = append(h.Events, e)
	}
	must(t, proxy.VisitPayloads(ctx, h, proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
			return pc.Decode(p)
		},
	}))
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	must(t, err)
	must(t, os.WriteFile(filepath.Join("testdata", name), b, 0o644))
	t.Logf("recorded %s: %d events", name, len(h.Events))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
