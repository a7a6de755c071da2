package score

import (
	"testing"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/types"
)

// BenchmarkSimulateAlibabaDay is one policy over the compressed openb day
// (8,000 pods, 8,640 steps of 10 s).
func BenchmarkSimulateAlibabaDay(b *testing.B) {
	full, err := ReadAlibabaFile("../traces/alibaba-gpu2023-openb-pods.csv")
	if err != nil {
		b.Fatal(err)
	}
	day, err := CompressAlibaba(full)
	if err != nil {
		b.Fatal(err)
	}
	catalog := catalogs.AWS()
	policy := types.DefaultPolicy()
	policy.MaxNodes = 500
	for _, c := range []struct {
		name string
		ctl  func() Controller
	}{
		{"law", func() Controller { return NewLaw("visor law", policy, catalog) }},
		{"cluster-autoscaler-like", func() Controller { return NewClusterAutoscaler(policy, catalog) }},
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
