package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// The org's usage comes from its pools' search attributes.
func TestReadOrgUsageAddsTargets(t *testing.T) {
	key := types.PoolKey{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east"}
	sa := func(target int, cluster string) *commonpb.SearchAttributes {
		return &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
			contract.SATargetNodes: {Data: []byte(fmt.Sprint(target))},
			contract.SACluster:     {Data: []byte(`"` + cluster + `"`)},
		}}
	}
	temporal := mocks.NewClient(t)
	temporal.On("ListWorkflow", mock.Anything, mock.MatchedBy(func(r *workflowservice.ListWorkflowExecutionsRequest) bool {
		return strings.Contains(r.Query, "VisorOrg = 'acme'")
	})).Return(&workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{
		{SearchAttributes: sa(3, "east")}, {SearchAttributes: sa(4, "west")},
	}}, nil)
	a := &Activities{Temporal: temporal}
	u, err := a.ReadOrgUsage(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, 7, u.Fabric)
	require.Equal(t, 3, u.Cluster)
}

func TestPlatformOrgLimitsAreTheWorkersOwn(t *testing.T) {
	a := &Activities{OrgLimits: types.OrgsByName([]types.OrgPolicy{{Org: "acme", MaxNodes: 10}})}
	lim, err := a.PlatformOrgLimits(context.Background(), "acme")
	require.NoError(t, err)
	require.Equal(t, &types.OrgPolicy{Org: "acme", MaxNodes: 10}, lim)
	lim, err = a.PlatformOrgLimits(context.Background(), "globex")
	require.NoError(t, err)
	require.Nil(t, lim)
}

// The org's hourly cost is what its pools' own memos say, decoded as the
// client encrypted them: a pool's real memo counts (it read as $0 while
// only plain JSON was read), a payload that does not decode does not.
func TestReadOrgUsageDecodesTheEncryptedMemo(t *testing.T) {
	key := types.PoolKey{Org: "globex", Project: "ml", Service: "infer", Provider: "sim", Cluster: "east"}
	k, err := codec.GenerateKey("k1")
	require.NoError(t, err)
	dc := codec.NewDataConverter(codec.Keys{k})
	cost, err := dc.ToPayload(0.80)
	require.NoError(t, err)
	temporal := mocks.NewClient(t)
	temporal.On("ListWorkflow", mock.Anything, mock.Anything).Return(&workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{
		{Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{contract.MemoPoolHourlyCost: cost}}},
		{Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{contract.MemoPoolHourlyCost: {Data: []byte("1000")}}}},
	}}, nil)
	u, err := (&Activities{Temporal: temporal, Payloads: dc}).ReadOrgUsage(context.Background(), key)
	require.NoError(t, err)
	require.InDelta(t, 0.80, u.HourlyCost, 1e-9)
}
