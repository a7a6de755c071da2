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
	// changeOfferings: a scale-up buys by offering (capacity type and
	// zone, the policy's capacityTypes, zones and maxSpotShare), and an
	// insufficient-capacity answer marks that offering unavailable for
	// offeringUnavailableFor and retries the next cheapest in the same
	// decision, where it used to strike the whole size off. Added
	// 2026-12-02, release v0.2.0.
	changeOfferings = "offerings"
)

// readRules reads, once per run, the law's rules the run decides with.
// A change ID that alters the law is asked here and sets its field, so a
// run's rules are one value, never loose booleans on pool. At the
// baseline there was none to ask.
func readRules(ctx workflow.Context) law.Rules {
	r := law.AllRules()
	r.Offerings = workflow.GetVersion(ctx, changeOfferings, workflow.DefaultVersion, 1) == 1
	return r
}
