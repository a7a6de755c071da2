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
	// changeInterruptions: a pool with spot machines reads its provider's
	// interruption notices on a timer of its own and, for each new one,
	// buys the replacement, drains and deletes the node by its deadline,
	// records the decision and acknowledges the notice
	// (pool_interruptions.go). Added 2026-12-02, release v0.2.0.
	changeInterruptions = "interruptions"
)

// readRules reads, once per run, the law's rules the run decides with.
// A change ID that alters the law is asked here and sets its field, so a
// run's rules are one value, never loose booleans on pool. At the
// baseline there is none to ask.
func readRules(workflow.Context) law.Rules { return law.AllRules() }
