package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScorePrintsTheTableAndWritesPlots(t *testing.T) {
	plots := t.TempDir()
	out, stderr, err := visorWith(t, "score", "--trace", "testdata/score-trace.csv", "--policy", "testdata/score-pools.yaml", "--plots", plots)
	if err != nil {
		t.Fatalf("visor score: %v\n%s%s", err, out, stderr)
	}
	for _, want := range []string{"| visor law |", "| seed rule |", "| cluster-autoscaler-like |", "| karpenter-like |", "| LP bound |", "| lower bound |", "longest wait", "cost ≤ 1.10× LP bound: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"score-trace-nodes.svg", "score-trace-pending.svg"} {
		raw, err := os.ReadFile(filepath.Join(plots, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "<svg") {
			t.Errorf("%s is not an SVG", name)
		}
	}
}

func TestScoreRefusesBadInputNamingIt(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"score", "--policy", "testdata/score-pools.yaml"}, "--trace is required"},
		{[]string{"score", "--trace", "testdata/score-trace.csv"}, "--policy is required"},
		{[]string{"score", "--trace", "testdata/score-trace.csv", "--policy", "testdata/score-pools.yaml", "--provisioning-delay", "-1s"}, "--provisioning-delay"},
		{[]string{"score", "--trace", "testdata/missing.csv", "--policy", "testdata/score-pools.yaml"}, "testdata/missing.csv"},
		{[]string{"score", "--trace", "testdata/score-trace.csv", "--policy", "testdata/score-pools.yaml", "--pool", "pool/a/b/c/sim/d"}, "no pool pool/a/b/c/sim/d"},
	} {
		_, _, err := visorWith(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("visor %v: err = %v, want %q", c.args, err, c.want)
		}
	}
}
