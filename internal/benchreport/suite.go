package main

import (
	"time"

	"github.com/hanzoai/visor-fleet/score"
	"github.com/hanzoai/visor-fleet/types"
)

// suite is every comparison of the report, plus a sweep of policy variants
// of the law on the same traces.
type suite struct {
	comparisons []score.Comparison
	variants    []variantRow
}

type variantRow struct {
	trace   string
	variant string
	s       score.Score
	limit   time.Duration
}

// variants are the policy changes the sweep tries, each from the pool's policy.
var variants = []struct {
	name  string
	apply func(*types.Policy)
}{
	{"pool policy as given", func(*types.Policy) {}},
	{"disableConsolidation: true", func(p *types.Policy) { p.DisableConsolidation = true }},
	{"consolidationThreshold: 0.5", func(p *types.Policy) { p.ConsolidationThreshold = 0.5 }},
	{"consolidationThreshold: 1 + consolidateAfter: 2m", func(p *types.Policy) {
		p.ConsolidationThreshold = 1
		p.ConsolidateAfter = types.Duration(2 * time.Minute)
	}},
	{"consolidateAfter: 10m", func(p *types.Policy) { p.ConsolidateAfter = types.Duration(10 * time.Minute) }},
	{"HIP scale-down: 10m cooldown, 1 node per decision", func(p *types.Policy) {
		p.ScaleDownCooldown = types.Duration(10 * time.Minute)
		p.MaxScaleDownPerDecision = 1
	}},
	{"scaleDownCooldown: 1m + idle window 5m", func(p *types.Policy) {
		p.ScaleDownCooldown = types.Duration(time.Minute)
		p.IdleWindow = types.Duration(5 * time.Minute)
	}},
	{"scaleUpCooldown: 0", func(p *types.Policy) { p.ScaleUpCooldown = 0 }},
}

func scoreSuite(openbPath, specPath string) (suite, error) {
	var out suite
	openbPool, openbCatalog, err := score.PoolFromSpec(specPath, "pool/bench/score/openb/aws/score-aws")
	if err != nil {
		return out, err
	}
	webPool, webCatalog, err := score.PoolFromSpec(specPath, "pool/bench/score/web/sim/score-sim")
	if err != nil {
		return out, err
	}
	day, err := score.LoadTrace(openbPath, score.TraceOptions{CompressDay: true})
	if err != nil {
		return out, err
	}
	type job struct {
		tr      score.Trace
		policy  types.Policy
		catalog []types.InstanceType
	}
	jobs := []job{{day, openbPool.Policy, openbCatalog}, {day.CPUOnly(), openbPool.Policy, openbCatalog}}
	for _, tr := range score.SyntheticTraces(1) {
		jobs = append(jobs, job{tr, webPool.Policy, webCatalog})
	}
	for _, j := range jobs {
		cmp, err := score.Compare(j.tr, j.catalog, j.policy, score.Options{})
		if err != nil {
			return out, err
		}
		out.comparisons = append(out.comparisons, cmp)
		for _, v := range variants {
			p := j.policy
			v.apply(&p)
			s, err := score.ScoreLaw(j.tr, j.catalog, p, cmp.Bound, cmp.Packing, score.Options{})
			if err != nil {
				return out, err
			}
			out.variants = append(out.variants, variantRow{trace: j.tr.Name, variant: v.name, s: s, limit: cmp.PendingLimit()})
		}
	}
	return out, nil
}
