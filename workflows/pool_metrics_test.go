package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/law"
)

func TestClassifyDecision(t *testing.T) {
	cases := []struct {
		rec                        contract.DecisionRecord
		direction, reason, outcome string
	}{
		{contract.DecisionRecord{Action: string(law.ActionScaleUp), Reason: "3 pods unschedulable longer than 1m0s", Outcome: "asked for 2 × sim-4c8g"}, "up", "pending-pods", "ok"},
		{contract.DecisionRecord{Action: string(law.ActionScaleUp), Reason: "0 nodes is below the floor of 2", Outcome: "failed: no capacity"}, "up", "floor", "failed"},
		{contract.DecisionRecord{Action: string(law.ActionScaleUp), Reason: "1 pods unschedulable longer than 1m0s", Outcome: "nothing to add: 1 pods fit no allowed size"}, "up", "pending-pods", "noop"},
		{contract.DecisionRecord{Action: string(law.ActionScaleDown), Reason: "2 nodes idle below 30% CPU and 40% memory for 10m0s", Outcome: "removed 2 of 2"}, "down", "idle", "ok"},
		{contract.DecisionRecord{Action: string(law.ActionScaleDown), Reason: "2 nodes idle below 30% CPU and 40% memory for 10m0s", Outcome: "removed 1 of 2; n2: drain timed out"}, "down", "idle", "partial"},
		{contract.DecisionRecord{Action: string(law.ActionScaleDown), Reason: "pool deregistered", Outcome: "removed 0 of 1; n1: boom"}, "down", "deregister", "failed"},
		{contract.DecisionRecord{Action: string(law.ActionScaleDown), Reason: "manual target 1: traffic gone", Outcome: "removed 1 of 1"}, "down", "manual", "ok"},
		{contract.DecisionRecord{Action: "manual-scale-up", Reason: "manual target 5: launch", Outcome: "asked for 2 × sim-4c8g"}, "up", "manual", "ok"},
		{contract.DecisionRecord{Action: "manual-scale", Reason: "manual target 3: check", Outcome: "already at target"}, "none", "manual", "noop"},
		{contract.DecisionRecord{Action: "something-new", Reason: "who knows"}, "none", "other", "ok"},
	}
	for _, c := range cases {
		d, r, o := classifyDecision(c.rec)
		require.Equal(t, []string{c.direction, c.reason, c.outcome}, []string{d, r, o}, "%+v", c.rec)
	}
}
