package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScorePrintsTheTableAndWritesPlots(t *testing.T) {
	plots := t.TempDir()
	out, stderr, err := visorWith(t, "score", "--trace", "testdata/score-trace.csv", "--policy", "testdata/score-pools.yaml", "--plots", plots, "--spot")
	if err != nil {
		t.Fatalf("visor score: %v\n%s%s", err, out, stderr)
	}
	for _, want := range []string{"[spot, on-demand]: cost $", "saved),", "| visor law |", "| seed rule |", "| cluster-autoscaler-like |", "| karpenter-like |", "| LP bound |", "| lower bound |", "longest wait", "cost ≤ 1.10× LP bound: "} {
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
		{[]string{"score", "--trace", "testdata/score-trace.csv", "--policy", "testdata/score-pools.yaml", "--spot", "--spot-price-factor", "2"}, "--spot-price-factor"},
		{[]string{"score", "--trace", "testdata/missing.csv", "--policy", "testdata/score-pools.yaml"}, "testdata/missing.csv"},
		{[]string{"score", "--trace", "testdata/score-trace.csv", "--policy", "testdata/score-pools.yaml", "--pool", "pool/a/b/c/sim/d"}, "no pool pool/a/b/c/sim/d"},
	} {
		_, _, err := visorWith(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("visor %v: err = %v, want %q", c.args, err, c.want)
		}
	}
}

// score is offline: its help names the synthetic traces and lists no
// Temporal connection flag; a command that connects still lists them.
func TestOfflineCommandsHelpListsNoConnectionFlags(t *testing.T) {
	out, _, err := visorWith(t, "score", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"synthetic:diurnal", "--trace", "--policy"} {
		if !strings.Contains(out, want) {
			t.Errorf("score --help lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"--address", "--tls-cert", "--namespace", "--credential"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("score --help lists the connection flag %s:\n%s", unwanted, out)
		}
	}
	out, _, err = visorWith(t, "pool", "list", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "--address") {
		t.Errorf("pool list --help lost the connection flags:\n%s", out)
	}
}
