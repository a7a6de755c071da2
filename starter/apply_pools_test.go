package starter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

func TestPolicyHashNamesThePolicyByContent(t *testing.T) {
	a, b := types.DefaultPolicy(), types.DefaultPolicy()
	require.Equal(t, contract.PolicyHash(a), contract.PolicyHash(b))
	require.Len(t, contract.PolicyHash(a), 32)
	b.MaxNodes++
	require.NotEqual(t, contract.PolicyHash(a), contract.PolicyHash(b))
	b = a
	b.AllowedSizes = []string{"s-2vcpu-4gb"}
	require.NotEqual(t, contract.PolicyHash(a), contract.PolicyHash(b))
}

// A running pool whose own memo shows the file's policy is skipped
// without a query: the nil client would panic if it were asked anything.
func TestApplySkipsAPoolWhoseMemoShowsThePolicy(t *testing.T) {
	spec := contract.PoolSpec{Key: types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}, Policy: types.DefaultPolicy()}
	running := map[string]listedPool{spec.Key.WorkflowID(): {policyHash: contract.PolicyHash(spec.Policy)}}
	res, err := applyListed(context.Background(), nil, spec, "", running)
	require.NoError(t, err)
	require.Equal(t, PoolUnchanged, res)

	// A different policy, or no hash in the memo, is not skipped.
	other := spec
	other.Policy.MaxNodes = 7
	require.Panics(t, func() { _, _ = applyListed(context.Background(), nil, other, "", running) })
	require.Panics(t, func() {
		_, _ = applyListed(context.Background(), nil, spec, "", map[string]listedPool{spec.Key.WorkflowID(): {}})
	})
}
