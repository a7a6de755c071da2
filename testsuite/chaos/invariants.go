package main

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	meterledger "github.com/hanzoai/visor-fleet/metering/ledger"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// truth is everything the checks read: the spec the run declared, the
// sims' state files, the meter ledger and the workflows as Temporal has them.
type truth struct {
	Spec   starter.SpecFile
	Sims   map[string]simTruth
	Ledger []meterledger.Row
	Pools  poolsReading
	Runs   []runTruth
	// Freshness are the pools' observation times sampled while visor dev
	// was up; FreshnessFailures the status reads that failed.
	Freshness         []freshnessSample
	FreshnessFailures int
	// Final is the ledger and the sims' machine records after every pool
	// was deregistered (invariants_meter.go); nil if that did not happen.
	Final *finalMeter
}

// result is one invariant: how many things it looked at and what broke it.
type result struct {
	Name       string
	Checked    int
	Violations []string
	// Advisory, when set, says until when the row is reported but not
	// counted: a check written ahead of the behaviour it checks.
	Advisory string
}

func (r *result) fail(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Grace added to a pool's own timeouts before the checker calls a machine
// or a workflow stuck: the pool acts on its resync, not the instant a
// timeout ends.
const stuckGrace = 30 * time.Second

// checkAll runs every invariant, in the order the table prints them.
func checkAll(t truth) []result {
	return []result{
		checkDuplicateGroups(t),
		checkDuplicateMachines(t),
		checkTargets(t),
		checkOrphans(t),
		checkBounds(t),
		checkLedgerUnique(t),
		checkLedgerGaps(t),
		checkLedgerMachineTime(t),
		checkFailedWorkflows(t),
		checkStuckWorkflows(t),
		checkObservationFreshness(t),
		checkMachineTimeouts(t),
		checkInterruptionsReplaced(t),
		checkPodsHaveNodes(t),
		checkOfferingRetries(t),
	}
}

func (t truth) clusterIDs() []string { return slices.Sorted(maps.Keys(t.Sims)) }

// poolGroups are a pool's groups at the provider.
func (t truth) poolGroups(k types.PoolKey) []connectors.NodeGroup {
	var out []connectors.NodeGroup
	for _, g := range t.Sims[k.Cluster].Inventory.Groups {
		if g.Pool == k {
			out = append(out, g.Group)
		}
	}
	return out
}
