package score

import (
	"fmt"
	"time"
)

// Target is one of the law's targets on one trace, met or not, with the
// numbers that say so (docs/BENCHMARKS.md, "Targets for the visor law").
type Target struct {
	Name   string
	Met    bool
	Detail string
}

// Named is the named policy's row.
func (c Comparison) Named(policy string) Score {
	for _, s := range c.Scores {
		if s.Policy == policy {
			return s
		}
	}
	return Score{}
}

// Targets checks the law against its targets: cost within 1.10× the LP
// bound, and the peer targets (PeerTargets); the LP bound below every
// policy; every run on the same input.
func (c Comparison) Targets() []Target {
	law := c.Law()
	below, same := true, true
	var above []string
	for _, r := range c.Runs {
		if r.Cost < c.LP.Cost {
			below = false
			above = append(above, fmt.Sprintf("%s $%.2f", r.Policy, r.Cost))
		}
		same = same && r.Fingerprint == c.Fingerprint
	}
	for _, r := range []Run{c.LP, c.Bound, c.Packing, c.Fewest} {
		same = same && r.Fingerprint == c.Fingerprint
	}
	boundDetail := fmt.Sprintf("LP bound $%.2f", c.LP.Cost)
	if !below {
		boundDetail += fmt.Sprintf(" is above %v", above)
	}
	out := []Target{{"cost ≤ 1.10× LP bound", law.LPCostRatio <= 1.10, fmt.Sprintf("%.3f×", law.LPCostRatio)}}
	out = append(out, c.PeerTargets()...)
	return append(out,
		Target{"LP bound below every policy", below, boundDetail},
		Target{"identical input", same, "fingerprint " + c.Fingerprint},
	)
}

// PeerTargets are the targets measured against the peer rules alone: cost
// at most the karpenter-like rule's; p99 total pending within the
// provisioning delay + 20 s; the longest wait at most the
// cluster-autoscaler-like rule's; no busy removal or stranded eviction.
func (c Comparison) PeerTargets() []Target {
	law, k, ca := c.Law(), c.Named(KarpenterLike), c.Named(ClusterAutoscalerLike)
	wait := c.Options.ProvisioningDelay + 20*time.Second
	return []Target{
		{"cost ≤ karpenter-like", law.KarpenterCostRatio <= 1, fmt.Sprintf("%.3f× ($%.2f vs $%.2f)", law.KarpenterCostRatio, law.Cost, k.Cost)},
		{fmt.Sprintf("p99 total pending ≤ %s", wait), law.WaitP99 <= wait, short(law.WaitP99)},
		{"longest wait ≤ cluster-autoscaler-like's", law.MaxPending <= ca.MaxPending, fmt.Sprintf("%s vs %s", short(law.MaxPending), short(ca.MaxPending))},
		{"0 busy removals, 0 stranded evictions", law.BusyRemovals == 0 && law.Stranded == 0, fmt.Sprintf("%d, %d", law.BusyRemovals, law.Stranded)},
	}
}
