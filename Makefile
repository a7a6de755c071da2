# Visor Fleet. The README's two commands are `make run` and `make test`.
GO        ?= go
BIN       ?= bin/visor
PKGS      ?= ./...
TESTFLAGS ?= -timeout 30m

.PHONY: run build test kwok-test bench bench-perf bench-report bench-scores lint replay-record kube-binaries chaos upgrade-test upgrade-cluster-test cluster-test scale clean

## run: the whole system on the embedded default (Temporal + Web UI + worker + simulated fleet)
run: build
	./$(BIN) dev

## build: the one binary, saying how much it compiles and showing progress
## (on a terminal or piped). A first (cold) build compiles the Temporal
## server and Web UI: about 8 minutes on 2 cores; with the build cache warm
## it takes seconds, then about a minute to link.
build:
	@bash scripts/build-visor.sh "$(GO)" "$(BIN)"

## test: every test, including the real kube-apiserver suite when its binaries are cached
test:
	@echo "make test: $$($(GO) list $(PKGS) | wc -l) packages. With a cold build cache the test binaries compile for about 10 minutes before the first result; each package prints one line (ok, FAIL or no test files) as it finishes; the real API server, PostgreSQL and browser suites take a few minutes each."
	$(GO) test $(TESTFLAGS) $$($(GO) list $(PKGS) | grep -v /testsuite/kwok$$)
	@echo "make test: last, alone (its timings are the real scheduler's): testsuite/kwok, about a minute"
	$(GO) test $(TESTFLAGS) -count=1 ./testsuite/kwok

## kwok-test: ten pools bought for and judged by the real kube-scheduler on
## kwok nodes, alone (its timings are the scheduler's); make test runs it
## last.
kwok-test:
	$(GO) test $(TESTFLAGS) -count=1 ./testsuite/kwok

## bench: speed and memory figures (go test -bench -benchmem), the
## 10,000-pod run on the real kube-scheduler (testsuite/kwok, log in
## artifacts/bench-kwok.txt; skipped without the kube binaries), Karpenter's
## performance-suite workloads (bench-perf), then the
## control law scored on the traces; writes docs/BENCHMARKS.md and its plots
bench:
	@mkdir -p artifacts
	$(GO) test -run '^$$' -bench . -benchmem ./sizing ./metering ./connectors/kubernetes ./score ./workflows ./law > artifacts/bench-speed.txt || { cat artifacts/bench-speed.txt; exit 1; }
	$(GO) test -run '^$$' -bench DecisionLatency -benchmem -benchtime 200x -timeout 30m ./testsuite/bench > artifacts/bench-latency.txt || { cat artifacts/bench-latency.txt; exit 1; }
	$(GO) test -run '^$$' -bench IdlePools -benchmem -benchtime 1x -timeout 40m ./testsuite/bench > artifacts/bench-idle.txt || { cat artifacts/bench-idle.txt; exit 1; }
	$(GO) test -run '^$$' -bench ApplyPools -benchmem -benchtime 1x -timeout 30m ./cmd/visor > artifacts/bench-apply.txt || { cat artifacts/bench-apply.txt; exit 1; }
	VISOR_KWOK_SCALE=1 $(GO) test -run TestScaleTenThousandPods -v -count=1 -timeout 30m ./testsuite/kwok > artifacts/bench-kwok.txt || { cat artifacts/bench-kwok.txt; exit 1; }
	$(MAKE) bench-perf
	cat artifacts/bench-speed.txt artifacts/bench-latency.txt artifacts/bench-idle.txt artifacts/bench-apply.txt > artifacts/bench.txt
	cat artifacts/bench.txt
	$(GO) run ./cmd/benchreport -bench artifacts/bench.txt -out docs/BENCHMARKS.md -plots docs/benchmarks

## bench-perf: the workloads of Karpenter's performance suite (basic,
## hostname spreading, wide deployments, do-not-disrupt) on the real
## kube-scheduler, one at a time, held to Karpenter's thresholds for time
## and requested-resource utilization at scale-out and after consolidation
## (testsuite/kwok perf_test.go; log in artifacts/bench-perf.txt, about 40
## minutes; skipped without the kube binaries)
bench-perf:
	@mkdir -p artifacts
	VISOR_KWOK_PERF=1 $(GO) test -run '^TestPerf' -v -count=1 -timeout 150m ./testsuite/kwok > artifacts/bench-perf.txt || { grep -E 'SCALE-OUT|CONSOLIDATION|do-not-disrupt:|threshold|FAIL|^ok' artifacts/bench-perf.txt; exit 1; }
	grep -E 'SCALE-OUT|CONSOLIDATION|do-not-disrupt:|^ok' artifacts/bench-perf.txt

## bench-report: rewrite docs/BENCHMARKS.md from the last bench log, recomputing the scores
bench-report:
	$(GO) run ./cmd/benchreport -bench artifacts/bench.txt -out docs/BENCHMARKS.md -plots docs/benchmarks

## bench-scores: recompute only the scores and plots of docs/BENCHMARKS.md, keeping its speed section
bench-scores:
	$(GO) run ./cmd/benchreport -scores-only -out docs/BENCHMARKS.md -plots docs/benchmarks

## lint: vet and formatting
lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## replay-record: re-record the workflow history fixtures under testsuite/replay/testdata
replay-record:
	VISOR_RECORD_HISTORIES=1 $(GO) test -run 'TestRecord' -count=1 -v ./testsuite/replay

## chaos: kill -9 visor dev at random moments (50 times by default) under
## bursty demand and provider faults, restart it on the same data, then
## settle without faults and check invariants from ground truth. About 15
## minutes; not part of `make test`. Longer: make chaos CHAOSFLAGS='-kills 100 -max-up 30s'
## Then the drift case (testsuite/chaos/drift.yaml, about 5 minutes): four
## busy nodes drift and are renewed while visor dev is killed at random.
CHAOSFLAGS ?=
UPGRADE_FROM ?= v0.1.0:term v0.2.0:kill
chaos: build
	$(GO) build -o bin/chaos ./testsuite/chaos
	./bin/chaos -visor $(BIN) -spec testsuite/chaos/pools.yaml $(CHAOSFLAGS)
	VISOR_CHAOS_DRIFT=1 VISOR_BIN=$(abspath $(BIN)) $(GO) test -run '^TestDriftUnderKill$$' -count=1 -v -timeout 20m ./testsuite/chaos

## upgrade-test: an operator's upgrade from each previous release to this
## tree: that release's visor dev (built from its tag, or its commit in
## internal/release/releases.txt) runs its own chaos spec until a pool has
## machines in flight, is stopped (v0.1.0 by SIGTERM, v0.2.0 by kill -9),
## and this binary takes over the same data directory; testsuite/chaos
## checks its invariants. Other pairs: make upgrade-test UPGRADE_FROM='v0.2.0:term'
upgrade-test: build
	UPGRADE_FROM="$(UPGRADE_FROM)" bash scripts/upgrade-test.sh "$(GO)" "$(BIN)"

## upgrade-cluster-test: the multi-process deployment (PostgreSQL) started
## with the previous release's workers, then each restarted from this tree's
## binary in turn (a rolling update, old and new side by side); ground
## truth checked as in cluster-test. About 2.5 minutes per release.
UPGRADE_CLUSTER_FROM ?= v0.1.0 v0.2.0
upgrade-cluster-test: build
	set -e; for rel in $(UPGRADE_CLUSTER_FROM); do \
		echo "== rolling upgrade from $$rel"; \
		VISOR_CLUSTER_UPGRADE=1 VISOR_BIN=$(abspath $(BIN)) VISOR_OLD_BIN=$$(bash scripts/build-release.sh $$rel "$(GO)") \
			$(GO) test -run '^TestRollingUpgrade$$' -count=1 -v -timeout 30m ./testsuite/cluster/; \
	done

## cluster-test: past one machine, on one: PostgreSQL, Temporal's frontend,
## history, matching and worker services as separate processes, the Web UI,
## three platform workers and a tenant worker on sim clusters; kill -9 two
## workers and the history service under bursty demand, time each until
## every pool decided again, check ground truth. About 8 minutes with the
## CI's 100 pools; the issue's run, which 2 cores carry only with a
## slower resync (the targets then stretch by resync - 20s):
## make cluster-test CLUSTER_POOLS=1000 CLUSTER_RESYNC=2m
CLUSTER_POOLS ?= 100
CLUSTER_RESYNC ?= 20s
CLUSTERFLAGS ?=
cluster-test: build
	VISOR_CLUSTER_TEST=1 VISOR_BIN=$(abspath $(BIN)) VISOR_CLUSTER_POOLS=$(CLUSTER_POOLS) VISOR_CLUSTER_RESYNC=$(CLUSTER_RESYNC) $(GO) test -run '^TestFailover$$' -count=1 -v -timeout 90m ./testsuite/cluster/ $(CLUSTERFLAGS)

## scale: the pool-count measurements of docs/scale.md, never in make test: idle
## pools on the embedded server (SQLite file as visor dev runs it: apply
## time, CPU per pool, RSS, history per pool-day), then the multi-process
## PostgreSQL deployment (apply, idle CPU of every process, database growth
## per pool-day, decision latency under a burst on 5 % of the pools).
## Over an hour on 2 cores; logs in artifacts/scale-*.txt. Counts:
## make scale SCALE_POOLS=10000 SCALE_CLUSTER_POOLS=2000
SCALE_POOLS ?= 10000
SCALE_CLUSTER_POOLS ?= 2000
scale: build
	mkdir -p artifacts
	VISOR_BENCH_STORE=file VISOR_BENCH_IDLE_POOLS=$(SCALE_POOLS) $(GO) test -run '^$$' -bench IdlePools -benchmem -benchtime 1x -timeout 90m ./testsuite/bench > artifacts/scale-embedded.txt || { cat artifacts/scale-embedded.txt; exit 1; }
	VISOR_CLUSTER_SCALE=1 VISOR_BIN=$(abspath $(BIN)) VISOR_CLUSTER_POOLS=$(SCALE_CLUSTER_POOLS) $(GO) test -run '^TestScaleOnPostgres$$' -count=1 -v -timeout 150m ./testsuite/cluster/ > artifacts/scale-cluster.txt || { cat artifacts/scale-cluster.txt; exit 1; }
	grep -h -E 'apply|idle|scale:|Benchmark' artifacts/scale-embedded.txt artifacts/scale-cluster.txt

## kube-binaries: build (or reuse) etcd and kube-apiserver for the real API server tests
kube-binaries:
	bash testsuite/kubeapi/build-binaries.sh

clean:
	rm -rf bin artifacts
