package main

import (
	"strings"
	"testing"
)

func TestParseBenchKeepsPackagesNamesAndCustomMetrics(t *testing.T) {
	in := `goos: linux
pkg: github.com/hanzoai/visor-fleet/sizing
BenchmarkPlanScaleUp/pods=1000-2         	     386	   3094417 ns/op	 1234 B/op	      56 allocs/op	        12.00 nodes
some log line from a benchmark
PASS
pkg: github.com/hanzoai/visor-fleet/testsuite/bench
BenchmarkDecisionLatency-2   	     200	  5000000 ns/op	         4.10 p50-ms	        9.80 p99-ms
ok  	github.com/hanzoai/visor-fleet/sizing	3.1s
`
	got, err := parseBench(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d benchmarks, want 2: %+v", len(got), got)
	}
	if got[0].Name != "BenchmarkPlanScaleUp/pods=1000" || got[0].Pkg != "github.com/hanzoai/visor-fleet/sizing" || got[0].N != 386 {
		t.Errorf("first = %+v", got[0])
	}
	if m := got[0].Metrics; len(m) != 4 || m[3].Unit != "nodes" || m[3].Value != 12 {
		t.Errorf("first metrics = %+v", m)
	}
	if got[1].Pkg != "github.com/hanzoai/visor-fleet/testsuite/bench" || got[1].Metrics[2].Unit != "p99-ms" {
		t.Errorf("second = %+v", got[1])
	}
}

func TestParseBenchNamesTheLineOfABadValue(t *testing.T) {
	_, err := parseBench(strings.NewReader("BenchmarkX-2 10 abc ns/op\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), `"abc"`) {
		t.Fatalf("err = %v", err)
	}
}
