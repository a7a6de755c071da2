package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/metering"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/types"
)

var (
	hour0  = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	readAt = hour0.Add(2*time.Hour + 10*time.Minute)
)

// healthyTruth is a fleet at rest that every invariant accepts: each pool
// at its floor in one group, Ready nodes, two metered hours, one running
// run per workflow and watchers heartbeating.
func healthyTruth(t *testing.T) truth {
	t.Helper()
	spec, err := loadChaosSpec("pools.yaml")
	require.NoError(t, err)
	tr := truth{
		Spec: spec.spec, Sims: map[string]simTruth{},
		Pools: poolsReading{Status: map[string]poolReading{}, Open: map[string]openTruth{}, ReadAt: readAt},
	}
	for _, c := range spec.spec.Clusters {
		tr.Sims[c.ID] = simTruth{Cluster: c.ID, Inventory: sim.Inventory{}}
		id := types.ClusterWorkflowID(c.ID)
		tr.Pools.Open[id] = openTruth{WorkflowID: id, Activities: []pendingActivity{
			{Type: "WatchCluster", State: enumspb.PENDING_ACTIVITY_STATE_STARTED, Attempt: 3, Heartbeat: readAt.Add(-5 * time.Second)},
		}}
		tr.Runs = append(tr.Runs, runTruth{WorkflowID: id, RunID: "r1", Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, Start: hour0.Add(10 * time.Minute)})
	}
	next := 0
	tr.Final = &finalMeter{Sims: map[string]simTruth{}, ReadAt: readAt.Add(time.Minute)}
	for _, p := range spec.spec.Pools {
		k, n := p.Key, p.Policy.MinNodes
		g := connectors.NodeGroup{ID: "g-" + k.Service, Name: k.Service + "-sim-4c8g", Size: "sim-4c8g", TargetSize: n}
		s := tr.Sims[k.Cluster]
		for range n {
			next++
			m := connectors.Instance{ID: fmt.Sprintf("i-%06d", next), Name: fmt.Sprintf("%s-%d", g.Name, next), State: connectors.InstanceRunning, CreatedAt: readAt.Add(-time.Hour)}
			g.Instances = append(g.Instances, m)
			s.Nodes = append(s.Nodes, readyNode(m.Name, k, readAt.Add(-time.Hour)))
		}
		s.Inventory.Groups = append(s.Inventory.Groups, sim.PoolGroup{Pool: k, Group: g})
		tr.Sims[k.Cluster] = s
		id := k.WorkflowID()
		tr.Pools.Status[id] = poolReading{Status: &contract.PoolStatus{
			Key: k, TargetNodes: n, Nodes: n, LastObservationAt: readAt.Add(-10 * time.Second), MeteredThrough: hour0.Add(2 * time.Hour),
		}}
		tr.Pools.Open[id] = openTruth{WorkflowID: id}
		tr.Runs = append(tr.Runs,
			runTruth{WorkflowID: id, RunID: "r0", Status: enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, Start: hour0.Add(10 * time.Minute)},
			runTruth{WorkflowID: id, RunID: "r1", Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, Start: hour0.Add(70 * time.Minute)})
		for h := range 2 {
			tr.Ledger = append(tr.Ledger, ledgerRow(k, "sim-4c8g", hour0.Add(time.Duration(h)*time.Hour)))
		}
		// Deregistered at the end: every machine ended at readAt, billed
		// 50 min in 11:00 and 10 min in 12:00.
		fs := tr.Final.Sims[k.Cluster]
		for _, m := range g.Instances {
			m.EndedAt = readAt
			fs.Inventory.Ended = append(fs.Inventory.Ended, sim.PoolInstance{Pool: k, Size: g.Size, GroupID: g.ID, Instance: m})
		}
		tr.Final.Sims[k.Cluster] = fs
		for h, minutes := range []int{50, 10} {
			r := ledgerRow(k, "sim-4c8g", hour0.Add(time.Duration(h+1)*time.Hour))
			r.Value = float64(n*minutes) / 60
			tr.Final.Ledger = append(tr.Final.Ledger, r)
		}
		// Sampled while a worker was up: 60 s after it came up, with an
		// observation 10 s old; and 10 s after, with one from before it.
		up := readAt.Add(-2 * time.Minute)
		tr.Freshness = append(tr.Freshness,
			freshnessSample{Pool: id, UpAt: up, At: up.Add(time.Minute), ObservedAt: up.Add(50 * time.Second)},
			freshnessSample{Pool: id, UpAt: up, At: up.Add(10 * time.Second), ObservedAt: up.Add(-5 * time.Minute)})
	}
	withSpotHistory(&tr)
	return tr
}

func readyNode(name string, k types.PoolKey, since time.Time) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: k.NodeLabels()},
		Spec:       corev1.NodeSpec{ProviderID: "sim://" + k.Cluster + "/" + name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(since)},
		}},
	}
}

func ledgerRow(k types.PoolKey, size string, hour time.Time) meterledger.Row {
	return meterledger.Row{
		Event: metering.Event{MeterID: metering.MeterNodeHours, UserID: k.Org, Value: 1, Hour: hour, Idempotency: metering.IdempotencyKey(k, size, hour),
			PoolID: k.WorkflowID(), Size: size},
	}
}

// violations maps each invariant's name to its violation count.
func violations(t truth) map[string]int {
	out := map[string]int{}
	for _, r := range checkAll(t) {
		out[r.Name] = len(r.Violations)
	}
	return out
}

func TestHealthyFleetBreaksNoInvariant(t *testing.T) {
	tr := healthyTruth(t)
	for _, r := range checkAll(tr) {
		assert.Empty(t, r.Violations, r.Name)
		assert.Positive(t, r.Checked, "%s checked nothing", r.Name)
	}
}

func firstPool(tr truth) (types.PoolKey, *simTruth) {
	k := tr.Spec.Pools[0].Key
	s := tr.Sims[k.Cluster]
	return k, &s
}

// Each fault the checker exists for breaks its own invariant and no other.
func TestEachInvariantCatchesItsFault(t *testing.T) {
	cases := map[string]struct {
		breakIt func(tr *truth)
		want    string
		also    string // a second invariant the same fault rightly breaks
	}{
		"the same pool and size twice": {func(tr *truth) {
			k, s := firstPool(*tr)
			g := s.Inventory.Groups[0]
			g.Group.ID, g.Group.Name, g.Group.TargetSize, g.Group.Instances = "g-again", "other-name", 0, nil
			s.Inventory.Groups = append(s.Inventory.Groups, g)
			tr.Sims[k.Cluster] = *s
		}, "no duplicate node group", ""},
		"a machine in two groups": {func(tr *truth) {
			k, s := firstPool(*tr)
			for i := range s.Inventory.Groups {
				if s.Inventory.Groups[i].Pool != k {
					s.Inventory.Groups[i].Group.Instances[0].ID = s.Inventory.Groups[0].Group.Instances[0].ID
					break
				}
			}
			tr.Sims[k.Cluster] = *s
		}, "no duplicate machine", ""},
		"the pool's target is its own bookkeeping": {func(tr *truth) {
			k, _ := firstPool(*tr)
			tr.Pools.Status[k.WorkflowID()].Status.TargetNodes++
		}, "pool target = provider target", ""},
		"a leaked machine nobody collected": {func(tr *truth) {
			k, s := firstPool(*tr)
			s.Inventory.Leaked = append(s.Inventory.Leaked, sim.PoolInstance{Pool: k, Size: "sim-4c8g", Instance: connectors.Instance{ID: "i-999999"}})
			tr.Sims[k.Cluster] = *s
		}, "no orphaned machine", ""},
		"a node whose machine is gone": {func(tr *truth) {
			k, s := firstPool(*tr)
			other := types.PoolKey{Org: "nobody", Project: "p", Service: "s", Provider: "sim", Cluster: k.Cluster}
			s.Nodes = append(s.Nodes, readyNode("ghost-1", other, readAt.Add(-time.Hour)))
			tr.Sims[k.Cluster] = *s
		}, "no orphaned machine", ""},
		"a target above the ceiling": {func(tr *truth) {
			p := tr.Spec.Pools[0]
			s := tr.Sims[p.Key.Cluster]
			s.Inventory.Groups[0].Group.TargetSize = p.Policy.MaxNodes + 1
			tr.Pools.Status[p.Key.WorkflowID()].Status.TargetNodes = p.Policy.MaxNodes + 1
			tr.Sims[p.Key.Cluster] = s
		}, "node counts within [min, max]", ""},
		"an hour billed twice": {func(tr *truth) {
			r := tr.Ledger[0]
			r.Idempotency += "-again"
			tr.Ledger = append(tr.Ledger, r)
		}, "one ledger row per pool, size, hour", ""},
		"an hour never billed": {func(tr *truth) {
			tr.Ledger = tr.Ledger[1:] // the first pool's first hour
			k := tr.Spec.Pools[0].Key
			tr.Ledger = append(tr.Ledger, ledgerRow(k, "sim-4c8g", hour0.Add(-time.Hour)))
		}, "no gap in a pool's metered hours", ""},
		"a row short of the provider's machine time": {func(tr *truth) {
			tr.Final.Ledger[0].Value -= 10.0 / 3600
		}, "ledger rows equal the provider's machine time", ""},
		"machine time never billed": {func(tr *truth) {
			tr.Final.Ledger = tr.Final.Ledger[1:]
		}, "ledger rows equal the provider's machine time", ""},
		"a meter cursor stuck in the past": {func(tr *truth) {
			k := tr.Spec.Pools[0].Key
			tr.Pools.Status[k.WorkflowID()].Status.MeteredThrough = hour0.Add(time.Hour)
		}, "no gap in a pool's metered hours", ""},
		"a failed run": {func(tr *truth) {
			tr.Runs[len(tr.Runs)-2].Status = enumspb.WORKFLOW_EXECUTION_STATUS_FAILED
		}, "no failed workflow", ""},
		"a nondeterministic replay": {func(tr *truth) {
			tr.Runs[len(tr.Runs)-1].TaskFailures = []taskFailure{{EventID: 42, Cause: enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR, Message: "nondeterministic workflow"}}
		}, "no failed workflow", ""},
		"a pool whose observations stopped": {func(tr *truth) {
			k := tr.Spec.Pools[0].Key
			tr.Pools.Status[k.WorkflowID()].Status.LastObservationAt = readAt.Add(-time.Hour)
		}, "no stuck workflow", ""},
		"a pool blind while its worker is up": {func(tr *truth) {
			s := tr.Freshness[0]
			s.At, s.ObservedAt = s.UpAt.Add(2*time.Minute), s.UpAt.Add(30*time.Second)
			tr.Freshness = append(tr.Freshness, s)
		}, "no pool without an applied observation for more than 45s while a worker is up", ""},
		"an activity retrying for ever": {func(tr *truth) {
			id := tr.Spec.Pools[0].Key.WorkflowID()
			tr.Pools.Open[id] = openTruth{WorkflowID: id, Activities: []pendingActivity{{Type: "Provision", State: enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, Attempt: 9, LastFailure: "503"}}}
		}, "no stuck workflow", ""},
		"a cluster without its watcher": {func(tr *truth) {
			id := types.ClusterWorkflowID(tr.Spec.Clusters[0].ID)
			tr.Pools.Open[id] = openTruth{WorkflowID: id}
		}, "no stuck workflow", ""},
		"a machine that never joined, kept": {func(tr *truth) {
			k, s := firstPool(*tr)
			g := &s.Inventory.Groups[0].Group
			g.Instances[0].State = connectors.InstanceCreating
			s.Nodes = s.Nodes[1:]
			tr.Sims[k.Cluster] = *s
		}, "no machine left past its timeout", "node counts within [min, max]"},
		"a node NotReady for good, kept": {func(tr *truth) {
			k, s := firstPool(*tr)
			s.Nodes[0].Status.Conditions[0].Status = corev1.ConditionUnknown
			tr.Sims[k.Cluster] = *s
		}, "no machine left past its timeout", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tr := healthyTruth(t)
			c.breakIt(&tr)
			got := violations(tr)
			assert.Positive(t, got[c.want], "%s not caught: %v", c.want, got)
			for inv, n := range got {
				if inv != c.want && inv != c.also {
					assert.Zero(t, n, "%s also tripped", inv)
				}
			}
		})
	}
}

func TestBenignTaskFailuresAreNotFailures(t *testing.T) {
	tr := healthyTruth(t)
	tr.Runs[0].TaskFailures = []taskFailure{{EventID: 7, Cause: enumspb.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND}}
	assert.Zero(t, violations(tr)["no failed workflow"])
	assert.Equal(t, 1, sumHistories(tr.Runs).benignTaskFailures)
}

func TestAWorkflowWithoutARunningRunIsCaught(t *testing.T) {
	tr := healthyTruth(t)
	id := tr.Spec.Pools[1].Key.WorkflowID()
	var kept []runTruth
	for _, r := range tr.Runs {
		if r.WorkflowID != id || r.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			kept = append(kept, r)
		}
	}
	tr.Runs = kept
	var failed result
	for _, r := range checkAll(tr) {
		if r.Name == "no failed workflow" {
			failed = r
		}
	}
	require.Len(t, failed.Violations, 1)
	assert.Contains(t, failed.Violations[0], id+": 0 running runs")
}

// A drift's group of the new node template beside the old one's is not a
// duplicate; a second group of the same template is.
func TestDriftGroupIsNoDuplicate(t *testing.T) {
	tr := healthyTruth(t)
	k, s := firstPool(tr)
	g := s.Inventory.Groups[0]
	g.Group.ID, g.Group.Name, g.Group.TargetSize, g.Group.Instances = "g-drift", g.Group.Name+"-t0123abcd", 0, nil
	g.Group.Labels = map[string]string{"rollout": "v2"}
	for lk, lv := range k.NodeLabels() {
		g.Group.Labels[lk] = lv
	}
	s.Inventory.Groups = append(s.Inventory.Groups, g)
	tr.Sims[k.Cluster] = *s
	assert.Zero(t, violations(tr)["no duplicate node group"])
	again := g
	again.Group.ID, again.Group.Name = "g-drift-again", g.Group.Name+"-2"
	s.Inventory.Groups = append(s.Inventory.Groups, again)
	tr.Sims[k.Cluster] = *s
	assert.Equal(t, 1, violations(tr)["no duplicate node group"])
}
