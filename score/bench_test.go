package score

import (
	"testing"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// BenchmarkSimulateAlibabaDay is one policy over the compressed openb day
// (8,000 pods, 8,640 steps of 10 s).
func BenchmarkSimulateAlibabaDay(b *testing.B) {
	day := alibabaDay(b)
	catalog := catalogs.AWS()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 500
	for _, c := range []struct {
		name string
		ctl  func() Controller
	}{
		{"law", func() Controller { return NewLaw("visor law", policy, catalog) }},
		{"cluster-autoscaler-like", func() Controller { return NewClusterAutoscaler(policy, catalog) }},
		{"karpenter-like", func() Controller { return NewKarpenter(policy, catalog) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Simulate(day, catalog, policy, c.ctl(), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("lower-bound", func(b *testing.B) {
		for b.Loop() {
			LowerBound(day, catalog, policy, 0)
		}
	})
}

// BenchmarkLPBoundSuite is the LP bound over the report's five traces
// (the openb day and its CPU pods on the AWS catalog, the synthetic
// traces on the sim's), as the report computes it.
func BenchmarkLPBoundSuite(b *testing.B) {
	day := alibabaDay(b)
	aws := catalogs.AWS()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 500
	type job struct {
		tr      Trace
		catalog []types.InstanceType
	}
	jobs := []job{{day, aws}, {day.CPUOnly(), aws}}
	for _, tr := range SyntheticTraces(1) {
		jobs = append(jobs, job{tr, catalogs.Sim()})
	}
	for b.Loop() {
		for _, j := range jobs {
			r := LPBound(j.tr, j.catalog, policy, 0)
			b.ReportMetric(float64(r.LP.Converged)/float64(max(r.LP.Solved, 1)), j.tr.Name+"-converged/solved")
		}
	}
}

// alibabaDay is the compressed openb day of the report.
func alibabaDay(b *testing.B) Trace {
	b.Helper()
	full, err := ReadAlibabaFile("../traces/alibaba-gpu2023-openb-pods.csv")
	if err != nil {
		b.Fatal(err)
	}
	day, err := CompressAlibaba(full)
	if err != nil {
		b.Fatal(err)
	}
	return day
}
