package starter

import (
	"context"
	"testing"
	"time"

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
	res, _, err := applyListed(context.Background(), nil, spec, "", running, false)
	require.NoError(t, err)
	require.Equal(t, PoolUnchanged, res)

	// A different policy, or no hash in the memo, is not skipped.
	other := spec
	other.Policy.MaxNodes = 7
	require.Panics(t, func() { _, _, _ = applyListed(context.Background(), nil, other, "", running, false) })
	require.Panics(t, func() {
		_, _, _ = applyListed(context.Background(), nil, spec, "", map[string]listedPool{spec.Key.WorkflowID(): {}}, false)
	})
}

// A running pool whose memo shows the file's policy with expiry off is
// unchanged when the file only defaulted expireAfter, and asked about
// (the nil client panics) when the file wrote it.
func TestApplySkipsARunningPoolWhoseExpiryOnlyTheDefaultChanges(t *testing.T) {
	spec := contract.PoolSpec{Key: types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}, Policy: types.DefaultPolicy()}
	off := spec.Policy
	off.ExpireAfter = 0
	running := map[string]listedPool{spec.Key.WorkflowID(): {policyHash: contract.PolicyHash(off)}}
	res, exp, err := applyListed(context.Background(), nil, spec, "", running, true)
	require.NoError(t, err)
	require.Equal(t, PoolUnchanged, res)
	require.Zero(t, exp)
	require.Equal(t, "expireAfter not written: expiry stays off for this running pool (write expireAfter to turn it on)", expiryNote(res, exp))
	require.Panics(t, func() { _, _, _ = applyListed(context.Background(), nil, spec, "", running, false) })
	require.Equal(t, "expireAfter 720h by default: nodes older than that are replaced (write expireAfter: 0s to keep them)", expiryNote(PoolCreated, spec.Policy.ExpireAfter))
	require.Equal(t, "1h30m", shortDuration(types.Duration(90*time.Minute)))
	require.Equal(t, "20s", shortDuration(types.Duration(20*time.Second)))
}
