// Command chaos is `make chaos`: it runs `visor dev` on one data directory
// with bursty demand and provider faults, kill -9s it at random moments
// and restarts it on the same data, then starts it once more without
// faults, lets the pools settle and checks invariants from ground truth:
// the sims' state files, the meter ledger and the workflows' histories.
// Last it deregisters every pool, so each bills the hour in progress, and
// checks every ledger row against the machine time the sims recorded.
// It prints a table of invariants and violations and exits 1 on any.
//
// Everything listens on loopback; every loop is bounded; every process it
// starts is ended before it returns (and dies with it if it is killed).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
)

type options struct {
	visor, specPath, dataDir string
	grpcPort                 int
	plan                     killPlan
	settle                   settleLimits
	maxChaos                 time.Duration
	upgrade                  upgradePlan
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&o.visor, "visor", "bin/visor", "the visor binary to run")
	fs.StringVar(&o.specPath, "spec", "testsuite/chaos/pools.yaml", "spec file: clusters, pools, demand and faults")
	fs.StringVar(&o.dataDir, "data-dir", "", "data directory (default: a new one under artifacts/chaos/); an existing one continues its run")
	fs.IntVar(&o.grpcPort, "grpc-port", 0, "Temporal gRPC port on 127.0.0.1 (default: a free one)")
	fs.IntVar(&o.plan.kills, "kills", 50, "how many times to kill -9 visor dev")
	fs.DurationVar(&o.plan.minUp, "min-up", 2*time.Second, "shortest time visor dev runs after it is up before a kill")
	fs.DurationVar(&o.plan.maxUp, "max-up", 15*time.Second, "longest time visor dev runs after it is up before a kill")
	fs.Float64Var(&o.plan.startupShare, "startup-share", 0.2, "share of kills that land while visor dev is starting")
	fs.DurationVar(&o.plan.startupWindow, "startup-window", 5*time.Second, "a startup kill lands within this long of the start")
	fs.DurationVar(&o.plan.upTimeout, "up-timeout", 2*time.Minute, "how long one start may take to come up")
	fs.DurationVar(&o.maxChaos, "max-chaos", 20*time.Minute, "the kill phase ends after this long even if kills remain")
	fs.DurationVar(&o.settle.min, "settle-min", 150*time.Second, "the final run waits at least this long (pools' timeouts must expire)")
	fs.DurationVar(&o.settle.max, "settle-max", 6*time.Minute, "the final run waits at most this long for the pools to come to rest")
	fs.DurationVar(&o.settle.interval, "settle-poll", 5*time.Second, "how often the final run polls")
	fs.StringVar(&o.upgrade.from, "from", "", "upgrade test: a previous release's visor binary, run once and stopped instead of the kill loop (scripts/build-release.sh builds one)")
	fs.StringVar(&o.upgrade.stop, "stop", "term", "upgrade test: how the previous release is stopped, term (SIGTERM) or kill (kill -9)")
	fs.DurationVar(&o.upgrade.minUp, "from-min-up", 30*time.Second, "upgrade test: the previous release runs at least this long once up, then until a pool acts at the provider (a scale-up is asked for if none does)")
	fs.DurationVar(&o.upgrade.maxUp, "from-max-up", 2*time.Minute, "upgrade test: the previous release runs at most this long once up")
	seed := fs.Uint64("seed", 1, "seed for kill timing and the faults' seeds")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.plan.seed = *seed
	var errs []error
	check := func(bad bool, format string, a ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(o.plan.kills < 1, "-kills: must be at least 1, got %d", o.plan.kills)
	check(o.plan.minUp < 0 || o.plan.maxUp < o.plan.minUp, "-min-up %s and -max-up %s: need 0 <= min-up <= max-up", o.plan.minUp, o.plan.maxUp)
	check(o.plan.startupShare < 0 || o.plan.startupShare > 1, "-startup-share: must be within [0, 1], got %g", o.plan.startupShare)
	check(o.plan.startupWindow <= 0, "-startup-window: must be positive, got %s", o.plan.startupWindow)
	check(o.plan.upTimeout <= 0, "-up-timeout: must be positive, got %s", o.plan.upTimeout)
	check(o.maxChaos <= 0, "-max-chaos: must be positive, got %s", o.maxChaos)
	check(o.settle.min < 0 || o.settle.max < o.settle.min, "-settle-min %s and -settle-max %s: need 0 <= settle-min <= settle-max", o.settle.min, o.settle.max)
	check(o.settle.interval <= 0, "-settle-poll: must be positive, got %s", o.settle.interval)
	check(o.grpcPort < 0 || o.grpcPort > 65535, "-grpc-port: %d is not a port", o.grpcPort)
	check(fs.NArg() > 0, "unexpected arguments %v", fs.Args())
	check(o.upgrade.stop != "term" && o.upgrade.stop != "kill", "-stop: %q is not term or kill", o.upgrade.stop)
	check(o.upgrade.minUp < 0 || o.upgrade.maxUp < o.upgrade.minUp, "-from-min-up %s and -from-max-up %s: need 0 <= min <= max", o.upgrade.minUp, o.upgrade.maxUp)
	o.upgrade.upTimeout = o.plan.upTimeout
	return o, errors.Join(errs...)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	violations, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if violations > 0 {
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) (int, error) {
	began := time.Now()
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[chaos %6s] %s\n", time.Since(began).Round(time.Second), fmt.Sprintf(format, a...))
	}
	spec, err := loadChaosSpec(o.specPath)
	if err != nil {
		return 0, err
	}
	if _, err := os.Stat(o.visor); err != nil {
		return 0, fmt.Errorf("-visor: %w (make chaos builds it first)", err)
	}
	if o.dataDir == "" {
		o.dataDir = filepath.Join("artifacts", "chaos", time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(filepath.Join(o.dataDir, "logs"), 0o700); err != nil {
		return 0, err
	}
	if o.grpcPort == 0 {
		if o.grpcPort, err = freePort(); err != nil {
			return 0, err
		}
	}
	dev := devCommand{visor: o.visor, dataDir: o.dataDir, grpcPort: o.grpcPort}
	if o.upgrade.from != "" {
		logf("upgrade test: data %s, Temporal on 127.0.0.1:%d, %s then %s (stopped by %s)", o.dataDir, o.grpcPort, o.upgrade.from, o.visor, o.upgrade.stop)
	} else {
		logf("data %s, Temporal on 127.0.0.1:%d, %d kills planned", o.dataDir, o.grpcPort, o.plan.kills)
	}

	o.plan.deadline = time.Now().Add(o.maxChaos)
	var fresh freshness
	var kills killStats
	var upgrade upgradeFacts
	if o.upgrade.from != "" {
		if _, err := os.Stat(o.upgrade.from); err != nil {
			return 0, fmt.Errorf("-from: %w", err)
		}
		kills, upgrade, err = runUpgradeFrom(ctx, dev, spec, o.upgrade, o.plan.seed, &fresh, logf)
	} else {
		kills, err = runKills(ctx, dev, spec, o.plan, &fresh, logf)
	}
	if err != nil {
		return 0, err
	}

	logf("final run without faults: settling %s to %s", o.settle.min, o.settle.max)
	raw, err := spec.withoutFaults()
	if err != nil {
		return 0, err
	}
	dev.specPath = filepath.Join(o.dataDir, "final-spec.yaml")
	if err := os.WriteFile(dev.specPath, raw, 0o600); err != nil {
		return 0, err
	}
	t, rest, final, err := finalRun(ctx, dev, spec, o.settle, &fresh, logf)
	if err != nil {
		return 0, err
	}
	t.Freshness, t.FreshnessFailures = fresh.taken()
	results := append(checkAll(t), startsResult(kills, final))
	if o.upgrade.from != "" {
		results = append(results, checkUpgrade(t, upgrade)...)
	}

	out := os.Stdout
	fmt.Fprintln(out)
	printFigures(out, kills, rest, sumHistories(t.Runs), time.Since(began))
	if billed, ran, worst, rows := meterFigures(t); t.Final != nil {
		fmt.Fprintf(out, "meter: %d node-hours rows, ledger %.4f node-hours, provider machine time %.4f node-hours (difference %+.3f node-s, worst row %.3f s)\n",
			rows, billed.Hours(), ran.Hours(), (billed - ran).Seconds(), worst.Seconds())
	}
	fmt.Fprintln(out)
	printPools(out, t)
	printWatchers(out, t)
	fmt.Fprintln(out)
	n := printInvariants(out, results)
	fmt.Fprintf(out, "\n%d violations; data and logs in %s\n", n, o.dataDir)
	return n, nil
}

// finalRun starts visor dev without faults, lets the pools settle, reads
// the truth and stops it with SIGINT. final lists what went wrong with
// the process itself.
func finalRun(ctx context.Context, dev devCommand, spec chaosSpec, limits settleLimits, fresh *freshness, logf func(string, ...any)) (t truth, rest settled, final []string, err error) {
	t.Spec = spec.spec
	p, err := dev.start(filepath.Join(dev.dataDir, "logs", "dev-final.log"))
	if err != nil {
		return t, rest, nil, err
	}
	defer func() {
		if !p.hasExited() {
			p.kill()
		}
	}()
	if err := p.waitUp(ctx, 3*time.Minute); err != nil {
		if more := whyExited(p.log.Name(), filepath.Join(dev.dataDir, "temporal.log"), p.started); more != "" {
			err = fmt.Errorf("%w; %s", err, more)
		}
		return t, rest, nil, fmt.Errorf("final run: %w", err)
	}
	c, err := dialDev(ctx, dev.dataDir, dev.grpcPort)
	if err != nil {
		return t, rest, nil, fmt.Errorf("final run: %w", err)
	}
	defer c.Close()
	stopSampling := fresh.watch(ctx, dev, poolKeys(spec.spec), time.Now())
	rest, err = settle(ctx, c, dev.dataDir, spec.spec, limits, logf)
	stopSampling()
	if err != nil {
		return t, rest, nil, err
	}
	t.Pools, t.Sims = rest.Pools, rest.Sims
	logf("settled=%v after %s; reading the ledger and histories", rest.Settled, rest.Took.Round(time.Second))
	if t.Ledger, err = readLedger(ctx, filepath.Join(dev.dataDir, "meter.db")); err != nil {
		return t, rest, nil, err
	}
	if t.Runs, err = readRuns(ctx, c); err != nil {
		return t, rest, nil, err
	}
	// Last, once everything else is read: deregister every pool, so its
	// final meter bills the hour in progress, and read what was billed.
	fm, err := deregisterAll(ctx, c, dev.dataDir, spec.spec, logf)
	if err != nil {
		return t, rest, nil, err
	}
	t.Final = &fm
	if err := p.stop(time.Minute); err != nil {
		final = append(final, fmt.Sprintf("final run: stop on SIGINT: %v (log %s)", err, p.log.Name()))
	}
	return t, rest, final, nil
}

func readLedger(ctx context.Context, path string) ([]meterledger.Row, error) {
	l, err := meterledger.Open(path)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.List(ctx, meterledger.Filter{})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
