package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
)

// upgradePlan is `chaos -from`: instead of the kill loop, one run of a
// previous release's visor dev on the data directory, stopped while a pool
// has machines in flight, before the final run starts this binary on the
// same data — an operator's upgrade, checked by the same invariants.
type upgradePlan struct {
	// from is the previous release's visor binary.
	from string
	// stop is how it ends: "term" (SIGTERM, as a service manager stops
	// it) or "kill" (kill -9, a crash mid-upgrade).
	stop string
	// minUp is the least it runs once up; then it is stopped as soon as
	// a pool has machines in flight, at maxUp at the latest.
	minUp, maxUp time.Duration
	upTimeout    time.Duration
}

// takeoverLimit: after the new binary is up, every pool must have applied
// an observation and scheduled its next evaluation within this long.
const takeoverLimit = time.Minute

// upgradeFacts are what the old run left behind for the report and checks.
type upgradeFacts struct {
	from, stop string
	ranFor     time.Duration
	// inFlight are the pools with machines asked for and not yet nodes,
	// or a provisioning, drain or delete activity running, when the old
	// release was stopped; forced says which scale-up the harness asked
	// for when demand had bought nothing by minUp.
	inFlight []string
	forced   string
}

// inFlight lists the pools acting at the provider: machines bought and
// not yet nodes (status), or a Provision, DrainNode or DeleteNode activity
// pending (Temporal's own record).
func inFlight(ctx context.Context, c client.Client, spec chaosSpec) []string {
	var out []string
	for _, k := range poolKeys(spec.spec) {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var what []string
		if s, err := starter.PoolStatus(qctx, c, k); err == nil && s.InFlight > 0 {
			what = append(what, fmt.Sprintf("%d machines booting", s.InFlight))
		}
		if d, err := c.DescribeWorkflowExecution(qctx, k.WorkflowID(), ""); err == nil {
			for _, a := range d.GetPendingActivities() {
				switch t := a.GetActivityType().GetName(); t {
				case "Provision", "DrainNode", "DeleteNode":
					what = append(what, t+" running")
				}
			}
		}
		cancel()
		if len(what) > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", k.WorkflowID(), strings.Join(what, ", ")))
		}
	}
	return out
}

// forceScaleUp asks the first pool with room for two nodes more than its
// target, through the scale update every release since v0.1.0 takes.
func forceScaleUp(ctx context.Context, c client.Client, spec chaosSpec) (string, error) {
	for _, p := range spec.spec.Pools {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err := starter.PoolStatus(qctx, c, p.Key)
		if err != nil {
			cancel()
			continue
		}
		target := min(s.TargetNodes+2, p.Policy.MaxNodes)
		if target <= s.TargetNodes {
			cancel()
			continue
		}
		_, err = starter.ScalePool(qctx, c, p.Key, contract.ScaleRequest{Target: target, Reason: "upgrade test: a purchase in flight when the previous release stops"})
		cancel()
		if err != nil {
			return "", fmt.Errorf("%s: scale to %d: %w", p.Key.WorkflowID(), target, err)
		}
		return fmt.Sprintf("asked %s for %d nodes (target was %d)", p.Key.WorkflowID(), target, s.TargetNodes), nil
	}
	return "", fmt.Errorf("no pool answered its status with room below its ceiling")
}

// runUpgradeFrom runs the previous release once and stops it as planned.
func runUpgradeFrom(ctx context.Context, dev devCommand, spec chaosSpec, plan upgradePlan, seed uint64, fresh *freshness, logf func(string, ...any)) (st killStats, facts upgradeFacts, err error) {
	began := time.Now()
	defer func() { st.elapsed = time.Since(began) }()
	facts.from, facts.stop = plan.from, plan.stop
	raw, err := spec.withSeeds(int64(seed))
	if err != nil {
		return st, facts, err
	}
	dev.visor = plan.from
	dev.specPath = filepath.Join(dev.dataDir, "old-release-spec.yaml")
	if err := os.WriteFile(dev.specPath, raw, 0o600); err != nil {
		return st, facts, err
	}
	p, err := dev.start(filepath.Join(dev.dataDir, "logs", "dev-old-release.log"))
	if err != nil {
		return st, facts, err
	}
	defer func() {
		if !p.hasExited() {
			p.kill()
		}
	}()
	if err := p.waitUp(ctx, plan.upTimeout); err != nil {
		if more := whyExited(p.log.Name(), filepath.Join(dev.dataDir, "temporal.log"), p.started); more != "" {
			err = fmt.Errorf("%w; %s", err, more)
		}
		return st, facts, fmt.Errorf("previous release %s: %w", plan.from, err)
	}
	st.startsUp++
	st.startTotal += time.Since(p.started)
	upAt := time.Now()
	logf("previous release up in %s; running %s to %s, stopped (%s) once a pool acts at the provider",
		st.startTotal.Round(time.Second), plan.minUp, plan.maxUp, plan.stop)
	stopSampling := fresh.watch(ctx, dev, poolKeys(spec.spec), upAt)
	c, err := dialDev(ctx, dev.dataDir, dev.grpcPort)
	if err != nil {
		stopSampling()
		return st, facts, err
	}
	forced := false
	for {
		if ctx.Err() != nil {
			stopSampling()
			c.Close()
			return st, facts, ctx.Err()
		}
		up := time.Since(upAt)
		if up >= plan.minUp {
			facts.inFlight = inFlight(ctx, c, spec)
			if len(facts.inFlight) > 0 || up >= plan.maxUp {
				break
			}
			// Demand may not have moved yet: ask one pool for two more
			// nodes, so a purchase is in flight at the stop.
			if !forced {
				forced = true
				if what, err := forceScaleUp(ctx, c, spec); err != nil {
					logf("asking for a scale-up to have one in flight: %v", err)
				} else {
					facts.forced = what
					logf("nothing in flight after %s: %s", up.Round(time.Second), what)
				}
			}
		}
		if p.hasExited() {
			break
		}
		time.Sleep(time.Second)
	}
	c.Close()
	stopSampling()
	facts.ranFor = time.Since(upAt)
	st.upTotal = facts.ranFor
	if p.hasExited() {
		st.failures = append(st.failures, fmt.Sprintf("previous release exited by itself: %v (log %s)", p.waitErr, p.log.Name()))
		return st, facts, nil
	}
	switch plan.stop {
	case "kill":
		p.kill()
		st.kills++
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
			if p.waitErr != nil {
				st.failures = append(st.failures, fmt.Sprintf("previous release on SIGTERM: %v (log %s)", p.waitErr, p.log.Name()))
			}
		case <-time.After(time.Minute):
			p.kill()
			st.failures = append(st.failures, fmt.Sprintf("previous release did not stop within a minute of SIGTERM (log %s)", p.log.Name()))
		}
	}
	logf("previous release stopped (%s) after %s up; in flight: %s", plan.stop, facts.ranFor.Round(time.Second), strings.Join(facts.inFlight, "; "))
	return st, facts, nil
}

// checkUpgrade: something was in flight when the previous release
// stopped (else the run proved less than it claims), and after the new
// binary came up every pool applied an observation and scheduled its
// next evaluation within takeoverLimit.
func checkUpgrade(t truth, facts upgradeFacts) []result {
	inflight := result{Name: "a pool acting at the provider when the previous release stopped", Checked: 1}
	if len(facts.inFlight) == 0 {
		inflight.fail("no pool was buying, draining or deleting after %s (%s): the upgrade met nothing mid-way", facts.ranFor.Round(time.Second), facts.forced)
	}
	take := result{Name: fmt.Sprintf("every pool observed and deciding under the new binary within %s", takeoverLimit)}
	var finalUp time.Time
	for _, s := range t.Freshness {
		if s.UpAt.After(finalUp) {
			finalUp = s.UpAt
		}
	}
	for _, k := range poolKeys(t.Spec) {
		take.Checked++
		id := k.WorkflowID()
		i := slices.IndexFunc(t.Freshness, func(s freshnessSample) bool {
			return s.Pool == id && s.UpAt.Equal(finalUp) && !s.ObservedAt.Before(finalUp) && !s.NextWake.IsZero()
		})
		switch {
		case i < 0:
			take.fail("%s: no status read after the new binary was up (at %s) shows an observation since and a next wake", id, finalUp.UTC().Format(time.TimeOnly))
		case t.Freshness[i].At.Sub(finalUp) > takeoverLimit+freshnessEvery:
			take.fail("%s: first observed and deciding %s after the new binary was up", id, t.Freshness[i].At.Sub(finalUp).Round(time.Second))
		}
	}
	return []result{inflight, take}
}
