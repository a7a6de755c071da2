package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/law"
)

// Change IDs for workflow.GetVersion. v0.1.0 is the versioning baseline
// (CHANGELOG.md): every change ID made before it was collapsed into plain
// code, and testsuite/replay replays histories recorded from it. A change
// to a pool's or cluster's command sequence after the baseline gets a
// constant here, with what it changes, the date it was added and the
// release it ships in; docs/design.md ("Versioning workflows") says how
// long it lives and how it is retired.
const (
	// versionReplace: replacement consolidation (law.Rules.Replace), one
	// cheaper node bought for underused ones, which are drained once it is
	// Ready. Added 2026-12-02, release v0.2.0.
	versionReplace = "law-replace"
	// versionBatch: pending pods bought for in Karpenter's batches
	// (law.Rules.Batch). Added 2026-12-02, release v0.2.0.
	versionBatch = "law-batch"
	// versionRebuyRepelled: a pod with hostname-scoped pod-to-pod rules
	// still pending beside the roomy node bought for it buys again
	// instead of being judged not helped (law.Rules.RebuyRepelled;
	// trackPurchases). Added 2026-12-02, ships in v0.2.0.
	versionRebuyRepelled = "rebuy-repelled"
	// changeInterruptions: a pool with spot machines reads its provider's
	// interruption notices on a timer of its own and, for each new one,
	// buys the replacement, drains and deletes the node by its deadline,
	// records the decision and acknowledges the notice
	// (pool_interruptions.go). Added 2026-12-02, release v0.2.0.
	changeInterruptions = "interruptions"
	// changeOfferings: a scale-up buys by offering (capacity type and
	// zone, the policy's capacityTypes, zones and maxSpotShare), and an
	// insufficient-capacity answer marks that offering unavailable for
	// offeringUnavailableFor and retries the next cheapest in the same
	// decision, where it used to strike the whole size off. Added
	// 2026-12-02, release v0.2.0.
	changeOfferings = "offerings"
	// changeGateActivity: a cluster of more than gateFanoutBatch pools
	// tells a gate change through one FanOutGate activity, where it sent
	// two history events' worth of signals per pool in batches and, at
	// 10,000 pools, continued as new five times per change, each new run
	// restarting its watcher (cluster_fanout.go). Added 2026-12-02,
	// release v0.2.0.
	changeGateActivity = "gate-fanout-activity"
	// changeKeepReplacement: a replacement's new node is named once seen
	// and no idle or consolidation rule removes it while the replacement
	// is under way; a replacement whose new node is gone, or that has not
	// completed within the provision timeout, is abandoned at once with a
	// decision saying why (law.Rules.KeepReplacement, pool_replace.go).
	// Added 2026-12-04, release v0.2.0.
	changeKeepReplacement = "keep-replacement"
)

// readRules reads, once per run, the law's rules the run decides with.
// A change ID that alters the law is asked here and sets its field, so a
// run's rules are one value, never loose booleans on pool. At the
// baseline there was none to ask.
func readRules(ctx workflow.Context) law.Rules {
	r := law.Rules{Consolidation: true, AcrossSizes: true, FewerNodes: true}
	r.Replace = workflow.GetVersion(ctx, versionReplace, workflow.DefaultVersion, 1) >= 1
	r.Batch = workflow.GetVersion(ctx, versionBatch, workflow.DefaultVersion, 1) >= 1
	r.RebuyRepelled = workflow.GetVersion(ctx, versionRebuyRepelled, workflow.DefaultVersion, 1) >= 1
	r.Offerings = workflow.GetVersion(ctx, changeOfferings, workflow.DefaultVersion, 1) == 1
	r.KeepReplacement = workflow.GetVersion(ctx, changeKeepReplacement, workflow.DefaultVersion, 1) == 1
	return r
}
