package workflows

// Change IDs for workflow.GetVersion. Every change to a workflow's command
// sequence gets one, and testsuite/replay proves old histories still replay.
const (
	// versionMeterFinalHour: deregistration meters the partial last hour.
	versionMeterFinalHour = "meter-final-hour"
	// versionReleaseOnDeregister: deregistration releases every node group
	// to zero, so machines still booting are not orphaned.
	versionReleaseOnDeregister = "release-on-deregister"
	// versionProviderTruth: the pool reads its node groups from the
	// provider on every resync and before acting and takes them as the
	// truth; it repairs machines that never join and nodes NotReady too
	// long; it counts booting room, parks only pods no size can hold,
	// judges idleness on every resource, guards against runaway scale-up,
	// skips idle nodes that cannot be emptied, refuses inputs dated in the
	// future and bounds what it carries. Checked once per run.
	versionProviderTruth = "provider-truth"
	// versionAuthenticatedInputs: the run reads the worker's trust through
	// the Trust activity and verifies signed signals with it (force-scale
	// by a caller of the pool's org, observe and watcher-report by a
	// worker's system key); a cluster-gate signal makes the pool read the
	// gate from the cluster workflow instead of taking its content.
	versionAuthenticatedInputs = "authenticated-inputs"
	// versionPoolMemo: the pool keeps its memo (reason line, policy hash)
	// in step with its state, for `pool list` and `pool apply`; version 2
	// adds its hourly cost, for the org's cost budget.
	versionPoolMemo = "pool-memo"
	// versionResyncOnce: the safety resync observes the pool and reads its
	// node groups in one activity instead of two.
	versionResyncOnce = "resync-once"
	// versionGateFanout: a cluster with more pools than one batch tells
	// them a gate change in awaited batches, carried across runs, instead
	// of all at once (Temporal's 2,000 pending signals). Asked only when
	// the cluster has that many pools.
	versionGateFanout = "gate-fanout"
	// versionStartIdentity: a pool workflow whose ID names one pool and
	// whose spec another fails at once. Asked only on a mismatch, so a
	// pool started as the starter starts it records nothing.
	versionStartIdentity = "start-identity"
	// versionFreshStartState: a run that did not continue from an earlier
	// one (no continue-as-new, retry or reset behind it) ignores any state
	// its input carries and starts from its spec. Asked only when such a
	// start carries state, which the starter never sends.
	versionFreshStartState = "fresh-start-state"
	// versionProviderQueueOwner: a pool whose providerTaskQueue is another
	// org's tenant queue fails at once. Asked only on such a spec.
	versionProviderQueueOwner = "provider-queue-owner"
	// versionIncarnationKeys: provider idempotency keys name the pool's
	// incarnation (the first run of its continue-as-new chain) as well as
	// the decision, so a pool deregistered and registered again, whose
	// decisions count from 1 again, never sends a key of its earlier life.
	// Checked once per run.
	versionIncarnationKeys = "incarnation-keys"
	// versionPlatformOrgLimits: every scale-up asks the platform's worker
	// for its limits on the org (a local activity; the worker's clusters
	// file) and, when they or the policy's orgLimits set any, reads the
	// org's usage on the workflows' own queue and obeys the stricter
	// limits, so a pool whose spec names none (a tenant's own spec file)
	// is bound too. Checked once per run, in runs with provider truth.
	versionPlatformOrgLimits = "platform-org-limits"
	// versionConsolidation: the law's consolidation rules
	// (DecisionInput.Consolidation): the scale-up cooldown holds back only
	// pods booting nodes have room for, a scale-up no longer holds
	// scale-down back, and underused nodes whose pods fit on the others are
	// removed, timed by the state's UnderusedSince clocks. Checked once per
	// run, in runs with provider truth.
	versionConsolidation = "consolidation"
	// versionPendingShapes: the pool decides from the observation's
	// pending shapes (every pending pod counted, each shape's oldest
	// listed): a shape's unlisted pods are one counted entry that the law
	// and the planner size, parked and bought for under the shape's key.
	// Runs without it ignore the shapes and decide from the list.
	versionPendingShapes = "pending-shapes"
	// versionNodeHours: the law's node-hours rules: consolidation moves an
	// underused node's pods onto Ready nodes of other sizes no smaller
	// whose labels and taints surely admit them
	// (DecisionInput.AcrossSizes), and the planner buys, among sizes
	// priced at the cheapest plan's rate, the one needing fewest nodes
	// (PlanInput.FewerNodes). Checked once per run, in runs with
	// versionConsolidation.
	versionNodeHours = "node-hours"
)

// versionBillingTier: the pool bills each hour under the tier its cluster
// held for it (managed node-hours, or BYO management-plane pool-hours),
// records tier changes as decisions and publishes VisorTier. Asked once per
// run, on first use (pool_tier.go).
const versionBillingTier = "billing-tier"

// versionInFlightIntake: while an action waits on its activities (plan,
// provision, drain, delete, collect, release), observe and cluster-gate
// signals are applied as they arrive instead of when the loop resumes, and
// a law's scale-down stops between nodes once the gate freezes it
// (pool_inflight.go). Checked once per run.
const versionInFlightIntake = "in-flight-intake"
