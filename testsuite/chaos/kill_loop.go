package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// killPlan is how the chaos phase kills visor dev.
type killPlan struct {
	kills int
	// minUp and maxUp bound how long visor dev runs after it is up.
	minUp, maxUp time.Duration
	// startupShare of the kills land while visor dev is still starting
	// (replaying histories, enrolling, applying), within startupWindow.
	startupShare  float64
	startupWindow time.Duration
	// upTimeout bounds one start; deadline ends the phase early.
	upTimeout time.Duration
	deadline  time.Time
	seed      uint64
}

// killStats are the phase's figures.
type killStats struct {
	kills, duringStartup int
	upTotal              time.Duration
	startTotal           time.Duration
	startsUp             int
	// failures are starts that exited by themselves or never came up.
	failures []string
	elapsed  time.Duration
	cutShort bool
}

// runKills starts visor dev on the data directory and kill -9s it at a
// random moment, plan.kills times, each start with the faults reseeded.
func runKills(ctx context.Context, dev devCommand, spec chaosSpec, plan killPlan, fresh *freshness, logf func(string, ...any)) (st killStats, err error) {
	rng := rand.New(rand.NewPCG(plan.seed, 0xc4a05))
	began := time.Now()
	defer func() { st.elapsed = time.Since(began) }()
	serverLog := filepath.Join(dev.dataDir, "temporal.log")
	// Starts that fail do not count as kills; the attempts are bounded
	// so a visor dev that cannot start ends the phase instead of looping.
	for i := 0; st.kills < plan.kills; i++ {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		if time.Now().After(plan.deadline) || i >= 2*plan.kills {
			st.cutShort = true
			logf("chaos phase ends early after %d kills (%d starts)", st.kills, i)
			return st, nil
		}
		raw, err := spec.withSeeds(int64(plan.seed) + int64(i)*100)
		if err != nil {
			return st, err
		}
		dev.specPath = filepath.Join(dev.dataDir, "chaos-spec.yaml")
		if err := os.WriteFile(dev.specPath, raw, 0o600); err != nil {
			return st, err
		}
		p, err := dev.start(filepath.Join(dev.dataDir, "logs", fmt.Sprintf("dev-%03d.log", i)))
		if err != nil {
			return st, err
		}
		inStartup := rng.Float64() < plan.startupShare
		if inStartup {
			// Kill at a random moment of the start, up or not.
			wait := time.Duration(rng.Int64N(int64(plan.startupWindow)))
			select {
			case <-time.After(wait):
			case <-p.exited:
			case <-ctx.Done():
			}
		} else {
			if err := p.waitUp(ctx, plan.upTimeout); err != nil {
				if !p.hasExited() {
					p.kill()
				}
				why := fmt.Sprintf("start %d: %v", i, err)
				if more := whyExited(p.log.Name(), serverLog, p.started); more != "" {
					why += "; " + more
				}
				st.failures = append(st.failures, why)
				logf("%s", why)
				continue
			}
			st.startsUp++
			st.startTotal += time.Since(p.started)
			upFor := plan.minUp + time.Duration(rng.Int64N(int64(plan.maxUp-plan.minUp)+1))
			stopSampling := fresh.watch(ctx, dev, poolKeys(spec.spec), time.Now())
			select {
			case <-time.After(upFor):
			case <-p.exited:
			case <-ctx.Done():
			}
			stopSampling()
			st.upTotal += upFor
		}
		if p.hasExited() {
			why := fmt.Sprintf("start %d: visor dev exited by itself: %v (log %s)", i, p.waitErr, p.log.Name())
			if more := whyExited(p.log.Name(), serverLog, p.started); more != "" {
				why += "; " + more
			}
			st.failures = append(st.failures, why)
			logf("%s", why)
			continue
		}
		wasUp := p.isUp()
		p.kill()
		st.kills++
		if !wasUp {
			st.duringStartup++
		}
		logf("kill %d/%d (%s after start, up: %v)", st.kills, plan.kills, time.Since(p.started).Round(100*time.Millisecond), wasUp)
	}
	return st, nil
}
