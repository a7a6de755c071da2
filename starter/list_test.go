package starter

import (
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/hanzoai/visor-fleet/contract"
)

func TestPoolFilterQuery(t *testing.T) {
	q, err := PoolFilter{}.Query()
	require.NoError(t, err)
	require.Equal(t, "WorkflowType = 'PoolWorkflow' AND ExecutionStatus = 'Running'", q)

	q, err = PoolFilter{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east", State: "paused", IncludeClosed: true}.Query()
	require.NoError(t, err)
	require.Equal(t, "WorkflowType = 'PoolWorkflow' AND VisorOrg = 'acme' AND VisorProject = 'web' AND VisorService = 'api' AND VisorProvider = 'sim' AND VisorCluster = 'east' AND VisorState = 'paused'", q)
}

func TestPoolFilterQueryLimitsToTheCallersOrgs(t *testing.T) {
	q, err := PoolFilter{Orgs: []string{"acme", "initech"}}.Query()
	require.NoError(t, err)
	require.Equal(t, "WorkflowType = 'PoolWorkflow' AND VisorOrg IN ('acme', 'initech') AND ExecutionStatus = 'Running'", q)
	// An explicit org wins; the frontend refuses it if it is not the caller's.
	q, err = PoolFilter{Org: "acme", Orgs: []string{"initech"}}.Query()
	require.NoError(t, err)
	require.Equal(t, "WorkflowType = 'PoolWorkflow' AND VisorOrg = 'acme' AND ExecutionStatus = 'Running'", q)
	_, err = PoolFilter{Orgs: []string{"acme') OR ('x"}}.Query()
	require.ErrorContains(t, err, "is not a lower-case DNS label")
}

func TestPoolFilterQueryRefusesWhatCouldChangeTheQuery(t *testing.T) {
	for _, c := range []struct {
		f    PoolFilter
		want string
	}{
		{PoolFilter{Org: "acme' OR 'x'='x"}, `org "acme' OR 'x'='x" is not a lower-case DNS label`},
		{PoolFilter{Provider: "AWS"}, `provider "AWS" is not a lower-case DNS label`},
		{PoolFilter{State: "steady' OR 1=1"}, `state "steady' OR 1=1" is not one of`},
	} {
		_, err := c.f.Query()
		require.ErrorContains(t, err, c.want)
	}
}

func TestPoolReasonPrefersTheMemoThenTheState(t *testing.T) {
	memo := func(r string) *commonpb.Memo {
		p, err := converter.GetDefaultDataConverter().ToPayload(r)
		require.NoError(t, err)
		return &commonpb.Memo{Fields: map[string]*commonpb.Payload{contract.MemoPoolReason: p}}
	}
	for _, c := range []struct {
		s    PoolSummary
		memo *commonpb.Memo
		want string
	}{
		{PoolSummary{State: "pending", ClusterPhase: "draining"}, memo("3 pods pending but scale-up is not allowed: cluster draining"), "3 pods pending but scale-up is not allowed: cluster draining"},
		{PoolSummary{State: "pending", ClusterPhase: "draining", PendingPods: 3}, nil, "cluster draining: no scale-up"},
		{PoolSummary{State: "pending", ClusterPhase: "active", PendingPods: 3}, nil, ""},
		{PoolSummary{State: "gated", ClusterPhase: "disabled"}, nil, "cluster disabled: no scaling"},
		{PoolSummary{State: "gated"}, nil, "cluster phase unknown: no scaling"},
		{PoolSummary{State: "paused"}, memo(""), "paused"},
		{PoolSummary{State: "frozen"}, nil, "scale-down frozen"},
		{PoolSummary{State: "steady"}, nil, ""},
	} {
		require.Equal(t, c.want, poolReason(c.s, c.memo), "%+v", c.s)
	}
}
