package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReportSaysWhatWasNotMeasured(t *testing.T) {
	benches, err := parseBench(strings.NewReader("pkg: github.com/hanzoai/visor-fleet/sizing\nBenchmarkPlanScaleUp/pods=100-2 10 2000 ns/op 7.00 nodes\nBenchmarkSomethingNew-2 5 100 ns/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeReport(&b, report{generated: time.Unix(0, 0).UTC(), goVersion: "go1.x", cpus: 2, benchLog: "bench.txt", benches: benches, plotDir: "benchmarks"})
	out := b.String()
	for _, want := range []string{
		"| sizing | PlanScaleUp/pods=100 | 10 | 2000 ns/op · 7 nodes |",
		"Not measured: no benchmark matching BenchmarkDecisionLatency in `bench.txt`.",
		"### Other benchmarks",
		"| SomethingNew | 5 |",
		"## Scoring the control law on demand traces",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	writeReport(&b, report{benchLog: "missing.txt"})
	if !strings.Contains(b.String(), "No benchmark log at `missing.txt`") {
		t.Errorf("report without a log:\n%s", b.String())
	}
}

func TestScoresOnlyKeepsTheSpeedSection(t *testing.T) {
	old := "# Benchmarks\n\nWritten ...\n\n## Speed and memory\n\n| sizing | PlanScaleUp | 1 | 2 ns/op |\n\n## Scoring the control law on demand traces\n\nold scores\n"
	kept, err := speedSection(old)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeReport(&b, report{keptSpeed: kept, benchLog: "missing.txt"})
	out := b.String()
	if !strings.Contains(out, "| sizing | PlanScaleUp | 1 | 2 ns/op |") || strings.Contains(out, "old scores") || strings.Contains(out, "No benchmark log") {
		t.Errorf("report:\n%s", out)
	}
	if _, err := speedSection("# Benchmarks\n\nno sections"); err == nil {
		t.Error("a report without a speed section was accepted")
	}
}
