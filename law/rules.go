package law

// Rules are the law's switchable rules. A pool run decides with
// AllRules; the scorer turns single rules off to measure what each one
// is worth (score.NewLawWith, cmd/benchreport).
type Rules struct {
	// Consolidation: the scale-up cooldown holds back only pods booting
	// nodes have room for, a scale-up no longer holds scale-down back, and
	// underused nodes whose pods fit on the others are removed
	// (decision_consolidate.go), timed by UpdateUnderusedSince's clocks.
	Consolidation bool
	// AcrossSizes: consolidation may move an underused node's pods onto
	// Ready nodes of any size whose placement they surely admit
	// (sameTemplate), not only its own size. Only with Consolidation.
	AcrossSizes bool
	// FewerNodes: the planner buys, among sizes priced at the cheapest
	// plan's rate, the one needing fewest nodes (sizing.Request.FewerNodes).
	// Decide does not plan; whoever sizes its scale-up reads it.
	FewerNodes bool
	// RebuyRepelled: a pod with hostname-scoped pod-to-pod rules (required
	// anti-affinity by hostname, host ports), still pending beside the
	// roomy node bought for it, may buy again instead of being judged not
	// helped. The node's room was never what refused it: a pod of its own
	// group took the node first (the scheduler binds in its own order),
	// and any new node, a new hostname, admits it. The pool reads it; the
	// law does not.
	RebuyRepelled bool
	// Replace: when no underused node can simply go, the first ones whose
	// pods one strictly cheaper node holds are replaced by it, bought
	// first and drained once it is Ready (decision_replace.go). Only with
	// Consolidation.
	Replace bool
	// Batch: pending pods are bought for in Karpenter's batches, 1 s
	// after the newest or 10 s after the first, the pending threshold only
	// an upper bound (decision_batch.go).
	Batch bool
	// Offerings: a scale-up buys by offering (capacity type, zone) and an
	// insufficient-capacity answer marks only that offering unavailable
	// for a while. Decide does not plan; whoever sizes reads it.
	Offerings bool
	// KeepReplacement: a replacement's new node, once seen, is named in
	// it (Replacement.Node) and is neither idle nor underused while the
	// replacement is under way, so no other rule removes the node the
	// replacement waits for; a replacement whose new node is gone, or that
	// has not completed within the provision timeout, is abandoned at once
	// (ReplacementVerdict), the workflow recording why. Only with Replace.
	KeepReplacement bool
}

// AllRules is what a new pool run decides with.
func AllRules() Rules {
	return Rules{Consolidation: true, AcrossSizes: true, FewerNodes: true, Replace: true, Batch: true, RebuyRepelled: true, Offerings: true, KeepReplacement: true}
}
