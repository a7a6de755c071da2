package law

import "time"

// Rules are the law's switchable rules, only those Decide reads. A pool
// run decides with AllRules (workflows.readRules starts from it); the
// scorer turns single rules off to measure what each one is worth
// (score.NewLawWith, cmd/benchreport). Rules the pool reads when it
// sizes, buys or judges a purchase live with their reader
// (workflows.runRules, score.Rules).
type Rules struct {
	// Consolidation: the scale-up cooldown holds back only pods booting
	// nodes have room for, a scale-up does not hold scale-down back, and
	// underused nodes whose pods fit on the others are removed
	// (decision_consolidate.go), timed by UpdateUnderusedSince's clocks.
	Consolidation bool
	// AcrossSizes: consolidation may move an underused node's pods onto
	// Ready nodes of any size whose placement they surely admit
	// (sameTemplate), not only its own size. Only with Consolidation.
	AcrossSizes bool
	// Replace: when no underused node can simply go, the first ones whose
	// pods one strictly cheaper node holds are replaced by it, bought
	// first and drained once it is Ready (decision_replace.go). Only with
	// Consolidation.
	Replace bool
	// ReplaceGPU: replacement consolidation also replaces GPU nodes,
	// several smaller ones by one larger size of the same GPU model that
	// costs strictly less than they do together (cheaper per device), or
	// one by a smaller; full nodes count too, since a GPU node is full on
	// its devices long before its CPU (decision_replace.go replaceGPU).
	// Only with Replace.
	ReplaceGPU bool
	// Prewarm: the pool learns its demand by time of day and week
	// (DemandModel) and, once it has a day of history, buys a
	// provisioning delay ahead of the rise it expects (PrewarmPods); it
	// never removes a node on a forecast, only keeps what the forecast
	// needs (ForecastKeeps). The caller feeds the model and the stand-in
	// pods; Decide reads DecisionInput.Prewarm. A pool run turns it on
	// (poolcore.AllRules), its model in its state; AllRules leaves it off
	// so the scorer's law is compared with and without it.
	Prewarm bool
	// Batch: pending pods are bought for in Karpenter's batches, 1 s
	// after the newest or 10 s after the first, the pending threshold only
	// an upper bound (decision_batch.go).
	Batch bool
	// Lifecycle: drifted and expired nodes are replaced within the
	// disruption budget (decision_lifecycle.go), when DecisionInput
	// carries a Lifecycle.
	Lifecycle bool
	// BudgetPaces: under a disruption budget that caps the nodes draining
	// at once, the budget paces scale-down, not the cooldown after it: a
	// node goes as soon as a drain slot is free, and a node the pool has
	// already drained and deleted holds no slot while its Node object
	// lingers. Idle nodes kept past their idle window say which rule
	// keeps them and until when (HeldIdle).
	BudgetPaces bool
	// RetryBlocked: an idle node whose drain failed is drained again once
	// its retry time passes without waiting a fresh idle window (the
	// failed drain's cordon broke its idle clock, not its idleness). The
	// pool sets the retry time with a backoff.
	RetryBlocked bool
	// KeepReplacement: a replacement's new node, once seen, is named in
	// it (Replacement.Node) and is neither idle nor underused while the
	// replacement is under way, so no other rule removes the node the
	// replacement waits for; a replacement whose new node is gone, or that
	// has not completed within the provision timeout, is abandoned at once
	// (ReplacementVerdict), the workflow recording why. Only with Replace.
	KeepReplacement bool
	// LifecycleRetry: a drifted or expired node whose drain failed is
	// drained again at its retry time (the pool's backoff, as RetryBlocked
	// for idle nodes) on both halves of a lifecycle replacement; before
	// it, the drain after the new node was bought was tried again at
	// every decision. Only with Lifecycle.
	LifecycleRetry bool
	// RenewalTolerations: a drifted or expired node whose evictable pods
	// do not tolerate a taint of the current node template is kept, with
	// why, instead of drained onto nodes that refuse them (its new node
	// would carry the taint). Only with Lifecycle; needs the observer's
	// NodeObservation.PodTolerations.
	RenewalTolerations bool
	// PackIdle: an idle node is removed only when its pods surely fit on
	// the Ready nodes that stay and admit them, packed as consolidation
	// packs (packIdle): each pod as large as the node's largest, first
	// fit, pod slots counted, a node without GPUs giving its pods only to
	// nodes without GPUs, labels and taints agreeing. Without it the sum
	// of the pods' requests had to fit the sum of the others' free room
	// and the largest pod one node, which is not a packing: pods were
	// stranded when that room was GPU nodes' or slivers too small for any
	// of them.
	PackIdle bool
	// ReplaceAtRate: a replacement of several nodes by one (Rules.Replace,
	// nodes without GPUs) buys only a size no dearer per unit of the pods
	// it moves than the dearest of the nodes it replaces: three half-empty 8-CPU nodes
	// replaced by one 16-CPU node dearer per CPU save a little now and
	// cost more for as long as it lives, the pool buying the cheaper size
	// again around it as soon as demand comes back.
	ReplaceAtRate bool
	// PackAnyOrder: the nodes one decision removes (consolidation, the
	// idle rule) are packed as a set whose pods find room whatever order
	// the scheduler binds them in and wherever it puts each
	// (decision_anyorder.go), not node by node into the room the law
	// counted for each: the scheduler put one node's small pod into the
	// room counted for another's large one, which then waited for a new
	// node. Only with KeepReplacement (the set groups nodes by template,
	// machine labels passed over).
	PackAnyOrder bool
}

// AllRules is what a new pool run decides with.
func AllRules() Rules {
	return Rules{Consolidation: true, AcrossSizes: true, Replace: true, ReplaceGPU: true, Batch: true, Lifecycle: true, BudgetPaces: true, RetryBlocked: true, KeepReplacement: true,
		LifecycleRetry: true, RenewalTolerations: true, PackIdle: true, ReplaceAtRate: true, PackAnyOrder: true}
}

// FreshScaleDownAge is the oldest observation a pool removes nodes on
// when it runs with the fresh scale-down rule (workflows' runRules,
// score.Rules.FreshScaleDown): older, it looks again and decides again
// first. Pods bind between samples, so a node seen empty, or with room,
// a sample interval ago may hold pods now.
const FreshScaleDownAge = 5 * time.Second
