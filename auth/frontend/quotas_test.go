package frontend

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// countedPools: acme runs n pools, of which "pool/acme/shop/api/sim/east".
type countedPools struct{ n int }

func (c countedPools) Running(_ context.Context, _, id string) (bool, error) {
	return id == "pool/acme/shop/api/sim/east", nil
}
func (c countedPools) RunningPools(context.Context, string, string) (int, error) { return c.n, nil }

// Each org's quota is its own: acme spending its signals and applies, or
// reaching its pool count, leaves globex's untouched; the platform's
// orgs: entry overrides the default field by field.
func TestQuotasArePerOrg(t *testing.T) {
	q := NewQuotas(types.OrgsByName([]types.OrgPolicy{{Org: "acme", SignalsPerSecond: 3, MaxPools: 5}}),
		Quota{MaxPools: 100, AppliesPerMinute: 2, SignalsPerSecond: 50}, countedPools{n: 5})
	ctx := context.Background()
	signal := func(id string) error {
		return q.Admit(ctx, svc+"SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: exec(id)})
	}
	for i := range 3 {
		if err := signal("pool/acme/shop/api/sim/east"); err != nil {
			t.Fatalf("signal %d within acme's 3/s refused: %v", i, err)
		}
	}
	if err := signal("pool/acme/shop/api/sim/east"); err == nil || !strings.Contains(err.Error(), "org acme has spent its 3 signals per second") {
		t.Fatalf("acme's 4th signal in a second: err = %v", err)
	}
	if err := signal("pool/globex/ml/infer/sim/east"); err != nil {
		t.Fatalf("globex's signal refused after acme spent its own: %v", err)
	}
	start := func(id string) error {
		return q.Admit(ctx, svc+"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: id})
	}
	if err := start("pool/acme/shop/web/sim/east"); err == nil || !strings.Contains(err.Error(), "runs 5 pools, its limit is 5") {
		t.Fatalf("acme's sixth pool: err = %v", err)
	}
	if err := start("pool/acme/shop/api/sim/east"); err != nil {
		t.Fatalf("acme's apply to its running pool (adds none) refused: %v", err)
	}
	if err := start("pool/acme/shop/api/sim/east"); err == nil || !strings.Contains(err.Error(), "has spent its 2 applies per minute") {
		t.Fatalf("acme's third apply in a minute: err = %v", err)
	}
	if err := start("pool/globex/ml/infer/sim/east"); err != nil {
		t.Fatalf("globex's start refused: %v", err)
	}
}
