package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// TestDriftUnderKill runs only when driftEnv is 1, on the visor binary
// driftBinEnv names (make chaos sets both).
const (
	driftEnv    = "VISOR_CHAOS_DRIFT"
	driftBinEnv = "VISOR_BIN"
)

// Labels of drift.yaml: the template the pool's nodes are created under,
// and the one the test applies.
const (
	rolloutLabel = "rollout"
	rolloutOld   = "v1"
	rolloutNew   = "v2"
)

// driftSample is the pool's nodes as the sim's state file had them at
// one moment.
type driftSample struct {
	At time.Time
	// Serving are Ready, schedulable nodes; Cordoned are being drained;
	// Old and New are nodes of the old and the new template, Ready or not.
	Serving, Cordoned, Old, New int
}

// TestDriftUnderKill: a pool of four busy nodes at its floor drifts (a
// new node label), and visor dev is killed with SIGKILL at random moments
// while the nodes are renewed, then restarted on the same data. From the
// sim's ground truth, sampled every second, and the pool's decisions:
// no node is renewed twice and every machine launched was asked for
// once, the pool never has fewer Ready schedulable nodes than its floor
// nor more nodes draining than maxDrainingNodes, every old node ends
// replaced, and every invariant `make chaos` checks holds. About five
// minutes: make chaos runs it (VISOR_CHAOS_DRIFT=1 VISOR_BIN=$PWD/bin/visor
// go test -run '^TestDriftUnderKill$' -v ./testsuite/chaos).
func TestDriftUnderKill(t *testing.T) {
	bin := os.Getenv(driftBinEnv)
	if os.Getenv(driftEnv) != "1" || bin == "" {
		t.Skipf("set %s=1 and %s to a visor binary (make chaos does)", driftEnv, driftBinEnv)
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	began := time.Now()
	var mu sync.Mutex
	var killedAt []time.Time
	logf := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if strings.HasPrefix(msg, "kill ") {
			mu.Lock()
			killedAt = append(killedAt, time.Now())
			mu.Unlock()
		}
		t.Logf("[%6s] %s", time.Since(began).Round(time.Second), msg)
	}

	old, err := loadChaosSpec("drift.yaml")
	if err != nil {
		t.Fatal(err)
	}
	from := []byte("nodeLabels: {" + rolloutLabel + ": " + rolloutOld + "}")
	if bytes.Count(old.raw, from) != 1 {
		t.Fatalf("drift.yaml does not say %q once", from)
	}
	raw := bytes.Replace(old.raw, from, []byte("nodeLabels: {"+rolloutLabel+": "+rolloutNew+"}"), 1)
	newSpec, err := starter.ParseSpecFile("drift.yaml (rollout v2)", raw)
	if err != nil {
		t.Fatal(err)
	}
	drifted := chaosSpec{path: old.path, raw: raw, spec: newSpec}
	pool := old.spec.Pools[0]
	key, floor := pool.Key, pool.Policy.MinNodes
	budget := pool.Policy.Disruption.MaxDrainingNodes

	dataDir, err := os.MkdirTemp("", "visor-chaos-drift-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dataDir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("data and logs kept in %s", dataDir)
			return
		}
		os.RemoveAll(dataDir)
	})
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dev := devCommand{visor: bin, dataDir: dataDir, grpcPort: port}
	var fresh freshness

	// The sim's state file, every second, from the moment the pool first
	// stands at its floor until the final run.
	var samples []driftSample
	var sampling sync.WaitGroup
	stopSampling := make(chan struct{})
	startSampling := func() {
		sampling.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				if sims, err := readSimTruth(dataDir, clusterIDs(old.spec)); err == nil {
					s := sampleDrift(sims[key.Cluster].Nodes, key)
					mu.Lock()
					samples = append(samples, s)
					mu.Unlock()
				}
				select {
				case <-stopSampling:
					return
				case <-tick.C:
				}
			}
		})
	}

	// 1. The pool under rollout v1 reaches its floor of Ready nodes, and
	// visor dev is killed.
	if err := writeSpec(&dev, old, "drift-v1.yaml", 0); err != nil {
		t.Fatal(err)
	}
	p, err := dev.start(filepath.Join(dataDir, "logs", "dev-v1.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !p.hasExited() {
			p.kill()
		}
	}()
	if err := p.waitUp(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	c, err := dialDev(ctx, dataDir, port)
	if err != nil {
		t.Fatal(err)
	}
	stopFresh := fresh.watch(ctx, dev, []types.PoolKey{key}, time.Now())
	waitPool(t, ctx, c, dataDir, key, 3*time.Minute, "the pool at its floor under rollout v1", func(st contract.PoolStatus, s driftSample) bool {
		return st.Nodes == floor && st.TargetNodes == floor && st.PendingPods == 0 && s.Serving == floor && s.Old == floor
	})
	stopFresh()
	c.Close()
	startSampling()
	p.kill()
	logf("rollout v1 at its floor of %d nodes; killed", floor)

	// 2. Every start applies rollout v2 (the first start drifts the
	// pool) and is killed at a random moment, as make chaos kills.
	driftAt := time.Now()
	plan := killPlan{kills: 5, minUp: 5 * time.Second, maxUp: 30 * time.Second, startupShare: 0.2,
		startupWindow: 5 * time.Second, upTimeout: 2 * time.Minute, deadline: time.Now().Add(8 * time.Minute), seed: 44}
	kills, err := runKills(ctx, dev, drifted, plan, &fresh, logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(kills.failures) > 0 {
		t.Errorf("starts that failed: %v", kills.failures)
	}

	// 3. A start left running until the roll is over.
	if err := writeSpec(&dev, drifted, "drift-v2.yaml", 1000); err != nil {
		t.Fatal(err)
	}
	p, err = dev.start(filepath.Join(dataDir, "logs", "dev-roll.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.waitUp(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	c, err = dialDev(ctx, dataDir, port)
	if err != nil {
		t.Fatal(err)
	}
	stopFresh = fresh.watch(ctx, dev, []types.PoolKey{key}, time.Now())
	st := waitPool(t, ctx, c, dataDir, key, 6*time.Minute, "the roll over", func(st contract.PoolStatus, s driftSample) bool {
		return st.Drifted == 0 && s.Old == 0 && s.Serving == floor && st.TargetNodes == floor && st.PendingPods == 0
	})
	stopFresh()
	c.Close()
	if err := p.stop(time.Minute); err != nil {
		t.Errorf("stop after the roll: %v", err)
	}
	close(stopSampling)
	sampling.Wait()
	logf("roll over after %d kills; final run", kills.kills)

	// 4. The final run of make chaos: settle without faults, read the
	// truth, deregister, check every invariant.
	tr, rest, final, err := finalRun(ctx, dev, drifted, settleLimits{min: 20 * time.Second, max: 3 * time.Minute, interval: 5 * time.Second}, &fresh, logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range final {
		t.Error(f)
	}
	if !rest.Settled {
		t.Errorf("the pool did not come to rest: %s", rest.Unrest)
	}
	tr.Freshness, tr.FreshnessFailures = fresh.taken()
	var table bytes.Buffer
	if n := printInvariants(&table, checkAll(tr)); n > 0 {
		t.Errorf("%d chaos invariants violated:\n%s", n, table.String())
	}

	// 5. The drift's own checks.
	mu.Lock()
	defer mu.Unlock()
	during, midRoll := 0, 0
	for _, at := range killedAt {
		if s, ok := sampleAt(samples, at); ok && s.Old > 0 {
			during++
			if s.New > 0 {
				midRoll++ // a renewal bought, an old node not yet gone
			}
		}
	}
	if during < 2 {
		t.Errorf("only %d of %d kills landed while old nodes were left: the roll was not killed twice", during, len(killedAt))
	}
	maxCordoned, minServing := 0, floor
	for _, s := range samples {
		maxCordoned = max(maxCordoned, s.Cordoned)
		if s.Serving < floor {
			t.Errorf("%s: %d Ready schedulable nodes, below the floor of %d", s.At.Format(time.TimeOnly), s.Serving, floor)
		}
		minServing = min(minServing, s.Serving)
	}
	if maxCordoned > budget {
		t.Errorf("%d nodes draining at once, past maxDrainingNodes %d", maxCordoned, budget)
	}
	checkRenewals(t, tr.Sims[key.Cluster].Inventory.Groups, tr.Sims[key.Cluster].Inventory.Ended, key, st.Decisions, driftAt)
	t.Logf("%d kills (%d during the roll, %d of them with new nodes up, %d at startup), %d samples: at least %d Ready schedulable nodes (floor %d), at most %d draining (budget %d); took %s",
		kills.kills, during, midRoll, kills.duringStartup, len(samples), minServing, floor, maxCordoned, budget, time.Since(began).Round(time.Second))
}

// writeSpec writes the spec, its faults reseeded from seed, where the
// next start reads it.
func writeSpec(dev *devCommand, spec chaosSpec, name string, seed int64) error {
	raw, err := spec.withSeeds(seed)
	if err != nil {
		return err
	}
	dev.specPath = filepath.Join(dev.dataDir, name)
	return os.WriteFile(dev.specPath, raw, 0o600)
}

// waitPool polls the pool's status and the sim's nodes until ok, or
// fails the test after limit.
func waitPool(t *testing.T, ctx context.Context, c client.Client, dataDir string, key types.PoolKey, limit time.Duration, what string, ok func(contract.PoolStatus, driftSample) bool) contract.PoolStatus {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last string
	for {
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		st, err := starter.PoolStatus(qctx, c, key)
		cancel()
		sims, serr := readSimTruth(dataDir, []string{key.Cluster})
		if err == nil && serr == nil {
			s := sampleDrift(sims[key.Cluster].Nodes, key)
			if ok(st, s) {
				return st
			}
			last = fmt.Sprintf("nodes %d, target %d, pending %d, drifted %d; sim: %d serving, %d cordoned, %d of the old template; blocked %v",
				st.Nodes, st.TargetNodes, st.PendingPods, st.Drifted, s.Serving, s.Cordoned, s.Old, st.Blocked)
		} else {
			last = fmt.Sprintf("status: %v; sim: %v", err, serr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, limit, last)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// sampleDrift counts the pool's nodes.
func sampleDrift(nodes []corev1.Node, key types.PoolKey) driftSample {
	s := driftSample{At: time.Now()}
	for _, n := range nodes {
		if n.Labels[types.LabelPool] != key.NodePoolLabel() {
			continue
		}
		if n.Labels[rolloutLabel] != rolloutNew {
			s.Old++
		} else {
			s.New++
		}
		switch {
		case n.Spec.Unschedulable:
			s.Cordoned++
		case nodeIsReady(n):
			s.Serving++
		}
	}
	return s
}

func nodeIsReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sampleAt is the last sample taken at or before at.
func sampleAt(samples []driftSample, at time.Time) (driftSample, bool) {
	i, _ := slices.BinarySearchFunc(samples, at, func(s driftSample, t time.Time) int { return s.At.Compare(t) })
	if i == 0 {
		return driftSample{}, false
	}
	return samples[i-1], true
}

// checkRenewals checks the provider's record against the pool's
// decisions: no machine of the old template is left, none was renewed
// twice (named in two purchases), and the provider launched no more
// machines of the new template than the old ones and the scale-ups
// account for (a purchase repeated after a lost answer or a kill would).
func checkRenewals(t *testing.T, groups []sim.PoolGroup, ended []sim.PoolInstance, key types.PoolKey, decisions []contract.DecisionRecord, driftAt time.Time) {
	t.Helper()
	newGroup := map[string]bool{}
	var old []string
	launched := 0
	for _, g := range groups {
		if g.Pool != key {
			continue
		}
		isNew := g.Group.Labels[rolloutLabel] == rolloutNew
		newGroup[g.Group.ID] = isNew
		for _, m := range g.Group.Instances {
			if isNew {
				launched++
			} else {
				t.Errorf("%s of the old template (group %s) is still there", m.Name, g.Group.ID)
				old = append(old, m.Name)
			}
		}
	}
	for _, e := range ended {
		if e.Pool != key {
			continue
		}
		if newGroup[e.GroupID] {
			launched++
		} else {
			old = append(old, e.Instance.Name)
		}
	}
	renewed := map[string]int{}
	scaledUp := 0
	var log []string
	for _, d := range decisions {
		log = append(log, d.At.UTC().Format(time.TimeOnly)+" "+d.Action+": "+d.Reason+" -> "+d.Outcome)
		if d.Action != string(law.ActionDisrupt) {
			if d.At.After(driftAt) {
				scaledUp += d.Added
			}
			continue
		}
		if !strings.HasPrefix(d.Outcome, "asked for") {
			continue
		}
		for _, name := range old {
			if strings.Contains(d.Reason, name+" ") {
				renewed[name]++
			}
		}
	}
	for name, n := range renewed {
		if n > 1 {
			t.Errorf("%s renewed %d times", name, n)
		}
	}
	if len(renewed) == 0 {
		t.Errorf("no renewal among the decisions:\n%s", strings.Join(log, "\n"))
	}
	if launched > len(old)+scaledUp {
		t.Errorf("%d machines of the new template launched for %d old ones and %d scaled up:\n%s", launched, len(old), scaledUp, strings.Join(log, "\n"))
	}
	t.Logf("%d old machines, %d renewed by a purchase, %d new machines launched, %d scaled up since the drift; decisions:\n%s", len(old), len(renewed), launched, scaledUp, strings.Join(log, "\n"))
}
