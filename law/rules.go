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
	// Offerings: a scale-up buys by offering (capacity type, zone) and an
	// insufficient-capacity answer marks only that offering unavailable
	// for a while. Decide does not plan; whoever sizes reads it.
	Offerings bool
}

// AllRules is what a new pool run decides with.
func AllRules() Rules {
	return Rules{Consolidation: true, AcrossSizes: true, FewerNodes: true, Offerings: true}
}
