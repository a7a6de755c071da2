package activities

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// The worker vouches for a cluster-gate in the name of the workflow that
// asked, and that name is part of what verifies.
func TestSignAsWorkflowBindsTheSender(t *testing.T) {
	sys, err := auth.GenerateSystemKey("sys")
	if err != nil {
		t.Fatal(err)
	}
	issuer, _ := auth.GenerateIssuer("iss")
	trust := auth.Trust{Issuers: map[string]string{"iss": issuer.Public()}, System: map[string]string{"sys": sys.Public()}}
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(&Activities{SystemKey: &sys})
	body := []byte(`{"phase":"active","reachable":true}`)
	pool := "pool/acme/shop/api/sim/sim-east"
	v, err := env.ExecuteActivity((&Activities{}).SignAsWorkflow, SignInput{Target: pool, Message: contract.SignalClusterGate, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	var sig types.SystemSignature
	if err := v.Get(&sig); err != nil {
		t.Fatal(err)
	}
	// The test environment's workflow ID stands for the sender.
	sender := "default-test-workflow-id"
	msgFrom := auth.FromWorkflow(contract.SignalClusterGate, sender)
	if err := auth.VerifySystem(trust, sig, pool, msgFrom, body, sig.At); err != nil {
		t.Fatalf("signature in the sender's name: %v", err)
	}
	if err := auth.VerifySystem(trust, sig, pool, auth.FromWorkflow(contract.SignalClusterGate, "cluster/other"), body, sig.At); err == nil {
		t.Fatal("verified as sent by another workflow")
	}
	if err := auth.VerifySystem(trust, sig, pool, contract.SignalClusterGate, body, sig.At); err == nil {
		t.Fatal("verified without the sender bound")
	}

	env2 := ts.NewTestActivityEnvironment()
	env2.RegisterActivity(&Activities{})
	if _, err := env2.ExecuteActivity((&Activities{}).SignAsWorkflow, SignInput{Target: pool, Message: "x", Body: body}); err == nil {
		t.Fatal("a worker without a system key signed")
	}
}
