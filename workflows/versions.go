package workflows

import (
	"github.com/hanzoai/visor-fleet/poolcore"
	"go.temporal.io/sdk/workflow"
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
	// instead of being judged not helped (poolcore.Rules.RebuyRepelled;
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
	// decision; a run begun before it strikes the whole size off. Added
	// 2026-12-02, release v0.2.0.
	changeOfferings = "offerings"
	// changeGateActivity: a cluster of more than gateFanoutBatch pools
	// tells a gate change through one FanOutGate activity; a run begun
	// before it sends two history events' worth of signals per pool in
	// batches, which at 10,000 pools continued as new five times per
	// change (cluster_fanout.go). Added 2026-12-02,
	// release v0.2.0.
	changeGateActivity = "gate-fanout-activity"
	// changeTriedSinceReady: a pod pending beside a roomy new node is
	// judged not helped only once kube-scheduler tried it after the node
	// became Ready, and the node's free room stays planned room while
	// pending pods wait for a try since (poolcore.Rules.TriedSinceReady). A
	// burst of 10,000 pods stalled at 1,906 bound: pods not yet retried
	// were judged refused and bought for no more. Added 2026-12-04,
	// release v0.3.0.
	changeTriedSinceReady = "tried-since-ready"
	// versionReplaceGPU: replacement consolidation also replaces GPU
	// nodes by one size of the same GPU model that costs less than they
	// do together (law.Rules.ReplaceGPU). Added 2026-12-04, release v0.3.0.
	versionReplaceGPU = "law-replace-gpu"
	// changeLifecycle: drift and expiry (law.Rules.Lifecycle,
	// pool_lifecycle.go): each node group's template hash is recorded, a
	// scale-up no longer grows a group of an older template, and drifted
	// or expired nodes are replaced within the disruption budget. Added
	// 2026-12-04, release v0.3.0.
	changeLifecycle = "lifecycle"
	// changeNotReadyClock: a node's NotReady clock starts when its Ready
	// condition changed, not when the pool first saw it NotReady
	// (poolcore.Rules.NotReadyClock, poolcore/unready.go), so the unready repair
	// comes unreadyTimeout after the node failed, however late the pool
	// learnt of it. Added 2026-12-04, release v0.3.0.
	changeNotReadyClock = "notready-clock"
	// changeBudgetPaces: under a disruption budget capping the nodes
	// draining at once, the budget paces scale-down instead of the
	// cooldown after it, a node the pool already removed holds no drain
	// slot while its Node object lingers, and idle nodes kept past their
	// idle window say which rule keeps them (law.Rules.BudgetPaces).
	// Added 2026-12-04, release v0.3.0.
	changeBudgetPaces = "budget-paces"
	// changeDrainBlocked: an idle node kept by a blocker says so (a
	// DisruptionBlocked Event once per reason, REASON, the Web UI), a
	// failed drain is retried with a backoff from 30s up to the idle
	// window instead of after a whole idle window, and the retry does not
	// wait a fresh idle window (law.Rules.RetryBlocked). Added
	// 2026-12-04, release v0.3.0.
	changeDrainBlocked = "drain-blocked"
	// changeKeepReplacement: a replacement's new node is bought in the old
	// nodes' zone, named once seen and kept from the idle and
	// consolidation rules while the replacement is under way; a
	// replacement whose new node is gone, or that has not completed within
	// the provision timeout, is abandoned at once with a decision saying
	// why (law.Rules.KeepReplacement, pool_replace.go). Added 2026-12-04,
	// release v0.3.0.
	changeKeepReplacement = "keep-replacement"
	// changeLifecycleRetry: a drifted or expired node whose drain failed
	// is retried as an idle node's is under drain-blocked, with a backoff
	// from one sample interval and one DisruptionBlocked Event per reason,
	// on both halves of a lifecycle replacement (law.Rules.LifecycleRetry,
	// pool_lifecycle.go); before it, after a whole idle window with an
	// Event per failure, and at every decision once the new node was
	// Ready. Added 2026-12-04, release v0.3.0.
	changeLifecycleRetry = "lifecycle-retry"
	// changeRenewalTolerations: a drifted or expired node whose evictable
	// pods do not tolerate a taint of the current node template is kept,
	// saying so, instead of drained onto nodes that refuse them
	// (law.Rules.RenewalTolerations, NodeObservation.PodTolerations).
	// Added 2026-12-04, release v0.3.0.
	changeRenewalTolerations = "renewal-tolerations"
	// changeParallelRemoval: a scale-down drains and deletes up to
	// removalsAtOnce of its nodes at the same time instead of one after
	// another, and status.removing shows it under way
	// (poolcore.Rules.ParallelRemoval, pool_removal.go). The last pool of a
	// 10,000-pod burst took minutes per hundred empty nodes. Added
	// 2026-12-04, release v0.3.0.
	changeParallelRemoval = "parallel-removal"
	// changeBuffers: the CapacityBuffers the watcher reports with an
	// observation (types.BufferObservation) are room the pool keeps beside
	// its policy's headroom: it buys for the buffer pods that do not fit
	// and scale-down keeps their room (poolcore.Rules.Buffers, poolcore/headroom.go).
	// A run begun before it drops them. Added 2026-12-04, release v0.3.0.
	changeBuffers = "capacity-buffers"
	// changePackIdle: the idle rule removes a node only when its pods
	// surely fit, packed first fit as consolidation packs them, on the
	// nodes that stay and admit them (law.Rules.PackIdle), not when their
	// requests merely sum to less than the others' free room. Added
	// 2026-12-04, release v0.3.0.
	changePackIdle = "pack-idle"
	// changeLookAhead: a scale-up chooses its size for the pods pending
	// and the demand the pool runs (law.RunningMix), buying for the
	// pending ones only, when that size is smaller and cheaper per unit
	// (poolcore.Rules.LookAhead, sizing.Request.Expected). Added 2026-12-04,
	// release v0.3.0.
	changeLookAhead = "look-ahead"
	// changeReplaceAtRate: a replacement buys no size dearer per unit of
	// the pods it moves than the nodes it replaces (law.Rules.ReplaceAtRate).
	// Added 2026-12-04, release v0.3.0.
	changeReplaceAtRate = "replace-at-rate"
	// changeFreshScaleDown: a scale-down decided on an observation older
	// than freshScaleDownAge resyncs and decides again first, not only one
	// older than two sample intervals (poolcore.Rules.FreshScaleDown): pods bind
	// between samples, and a decision woken by a timer decides on the
	// last one. Added 2026-12-04, release v0.3.0.
	changeFreshScaleDown = "fresh-scale-down"
	// changePrewarm: the pool learns its demand by time of day and week
	// (PoolState.Demand) and buys a provisioning delay ahead of the rise
	// it expects, once it has a day of history (law.Rules.Prewarm,
	// poolcore/prewarm.go). Added 2026-12-04, release v0.3.0.
	changePrewarm = "prewarm"
	// changePackAnyOrder: the nodes one decision removes are packed as a
	// set whose pods find room whatever order and nodes the scheduler
	// picks (law.Rules.PackAnyOrder), not each into the room the law
	// counted for it. Added 2026-12-04, release v0.3.0.
	changePackAnyOrder = "pack-any-order"
)

// Change is one change ID this code knows: the highest version it records
// (GetVersion's maxSupported) and the release it first shipped in.
type Change struct {
	ID      string `json:"id"`
	Max     int    `json:"max"`
	Release string `json:"release"`
}

// Changes lists every change ID the workflows ask workflow.GetVersion
// about, with the maxSupported they pass; TestChangesMatchGetVersionCalls
// checks it against the calls in this package's source. `visor version`
// prints it, and a worker refuses to start on histories that recorded a
// change ID not in it or a version above its Max (downgrade.go).
var Changes = []Change{
	{ID: versionReplace, Max: 1, Release: "v0.2.0"},
	{ID: versionBatch, Max: 1, Release: "v0.2.0"},
	{ID: versionRebuyRepelled, Max: 1, Release: "v0.2.0"},
	{ID: changeInterruptions, Max: 1, Release: "v0.2.0"},
	{ID: changeOfferings, Max: 1, Release: "v0.2.0"},
	{ID: changeGateActivity, Max: 1, Release: "v0.2.0"},
	{ID: changeTriedSinceReady, Max: 1, Release: "v0.3.0"},
	{ID: versionReplaceGPU, Max: 1, Release: "v0.3.0"},
	{ID: changeLifecycle, Max: 1, Release: "v0.3.0"},
	{ID: changeNotReadyClock, Max: 1, Release: "v0.3.0"},
	{ID: changeBudgetPaces, Max: 1, Release: "v0.3.0"},
	{ID: changeDrainBlocked, Max: 1, Release: "v0.3.0"},
	{ID: changeKeepReplacement, Max: 1, Release: "v0.3.0"},
	{ID: changeLifecycleRetry, Max: 1, Release: "v0.3.0"},
	{ID: changeRenewalTolerations, Max: 1, Release: "v0.3.0"},
	{ID: changeParallelRemoval, Max: 1, Release: "v0.3.0"},
	{ID: changeBuffers, Max: 1, Release: "v0.3.0"},
	{ID: changePackIdle, Max: 1, Release: "v0.3.0"},
	{ID: changeLookAhead, Max: 1, Release: "v0.3.0"},
	{ID: changeReplaceAtRate, Max: 1, Release: "v0.3.0"},
	{ID: changeFreshScaleDown, Max: 1, Release: "v0.3.0"},
	{ID: changePrewarm, Max: 1, Release: "v0.3.0"},
	{ID: changePackAnyOrder, Max: 1, Release: "v0.3.0"},
}

// readRules reads, once per run, the rules the run decides with. It
// starts from allRunRules, so a rule added to law.AllRules reaches every
// new run; a change ID that alters the law is asked here and turns its
// rule off in a run begun before it, so a run's rules are one value,
// never loose booleans on pool. Each GetVersion is called whatever the
// rule's default, in this order, as the histories recorded it.
func readRules(ctx workflow.Context) poolcore.Rules {
	r := poolcore.AllRules()
	r.Replace = workflow.GetVersion(ctx, versionReplace, workflow.DefaultVersion, 1) >= 1 && r.Replace
	r.Batch = workflow.GetVersion(ctx, versionBatch, workflow.DefaultVersion, 1) >= 1 && r.Batch
	r.RebuyRepelled = workflow.GetVersion(ctx, versionRebuyRepelled, workflow.DefaultVersion, 1) >= 1 && r.RebuyRepelled
	r.Offerings = workflow.GetVersion(ctx, changeOfferings, workflow.DefaultVersion, 1) == 1 && r.Offerings
	r.TriedSinceReady = workflow.GetVersion(ctx, changeTriedSinceReady, workflow.DefaultVersion, 1) == 1 && r.TriedSinceReady
	r.ReplaceGPU = workflow.GetVersion(ctx, versionReplaceGPU, workflow.DefaultVersion, 1) >= 1 && r.ReplaceGPU && r.Replace
	r.Lifecycle = workflow.GetVersion(ctx, changeLifecycle, workflow.DefaultVersion, 1) == 1 && r.Lifecycle
	r.NotReadyClock = workflow.GetVersion(ctx, changeNotReadyClock, workflow.DefaultVersion, 1) == 1 && r.NotReadyClock
	r.BudgetPaces = workflow.GetVersion(ctx, changeBudgetPaces, workflow.DefaultVersion, 1) == 1 && r.BudgetPaces
	r.RetryBlocked = workflow.GetVersion(ctx, changeDrainBlocked, workflow.DefaultVersion, 1) == 1 && r.RetryBlocked
	r.KeepReplacement = workflow.GetVersion(ctx, changeKeepReplacement, workflow.DefaultVersion, 1) == 1 && r.KeepReplacement
	r.LifecycleRetry = workflow.GetVersion(ctx, changeLifecycleRetry, workflow.DefaultVersion, 1) == 1 && r.LifecycleRetry && r.Lifecycle && r.RetryBlocked
	r.RenewalTolerations = workflow.GetVersion(ctx, changeRenewalTolerations, workflow.DefaultVersion, 1) == 1 && r.RenewalTolerations && r.Lifecycle
	r.ParallelRemoval = workflow.GetVersion(ctx, changeParallelRemoval, workflow.DefaultVersion, 1) == 1 && r.ParallelRemoval
	r.Buffers = workflow.GetVersion(ctx, changeBuffers, workflow.DefaultVersion, 1) == 1 && r.Buffers
	r.PackIdle = workflow.GetVersion(ctx, changePackIdle, workflow.DefaultVersion, 1) == 1 && r.PackIdle
	r.LookAhead = workflow.GetVersion(ctx, changeLookAhead, workflow.DefaultVersion, 1) == 1 && r.LookAhead
	r.ReplaceAtRate = workflow.GetVersion(ctx, changeReplaceAtRate, workflow.DefaultVersion, 1) == 1 && r.ReplaceAtRate && r.Replace
	r.FreshScaleDown = workflow.GetVersion(ctx, changeFreshScaleDown, workflow.DefaultVersion, 1) == 1 && r.FreshScaleDown
	r.Prewarm = workflow.GetVersion(ctx, changePrewarm, workflow.DefaultVersion, 1) == 1 && r.Prewarm
	r.PackAnyOrder = workflow.GetVersion(ctx, changePackAnyOrder, workflow.DefaultVersion, 1) == 1 && r.PackAnyOrder
	return r
}
