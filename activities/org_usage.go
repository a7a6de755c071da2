package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// OrgUsage is how many nodes an org's running pools have, by their
// published target: on the whole fabric and on one cluster.
type OrgUsage struct {
	Fabric  int `json:"fabric"`
	Cluster int `json:"cluster"`
	// HourlyCost is what the org's pools say they cost per hour (their
	// memo), on the whole fabric.
	HourlyCost float64 `json:"hourlyCost"`
}

// PlatformOrgLimits are the platform's limits on org (the worker's
// clusters file), nil when it sets none. A local activity: it runs in the
// worker that runs the pool's workflow, the platform's, and reads no
// server, so a pool with no limits anywhere skips ReadOrgUsage's listing.
func (a *Activities) PlatformOrgLimits(_ context.Context, org string) (*types.OrgPolicy, error) {
	// An org with only frontend quotas sets no limit its pools obey.
	if lim, ok := a.OrgLimits[org]; ok && lim.SetsNodeLimits() {
		return &lim, nil
	}
	return nil, nil
}

// maxOrgPools bounds one usage count's listing.
const maxOrgPools = 20000

// ReadOrgUsage adds up the org's pools' targets from the search attributes
// (visibility, one listing): a pool learns its org's usage without
// querying the other pools.
func (a *Activities) ReadOrgUsage(ctx context.Context, key types.PoolKey) (OrgUsage, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s = '%s'", contract.PoolWorkflow, contract.SAOrg, key.Org)
	var u OrgUsage
	var token []byte
	seen := 0
	for {
		resp, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token, PageSize: 1000})
		if err != nil {
			return OrgUsage{}, err
		}
		for _, e := range resp.Executions {
			fields := e.GetSearchAttributes().GetIndexedFields()
			var target int64
			if p, ok := fields[contract.SATargetNodes]; ok {
				_ = json.Unmarshal(p.GetData(), &target)
			}
			var cluster string
			if p, ok := fields[contract.SACluster]; ok {
				_ = json.Unmarshal(p.GetData(), &cluster)
			}
			u.Fabric += int(target)
			if p, ok := e.GetMemo().GetFields()[contract.MemoPoolHourlyCost]; ok {
				// Written by the pool's own workflow (a tenant's start may
				// not set a memo: auth/frontend), encrypted by the codec.
				var cost float64
				if a.payloads().FromPayload(p, &cost) == nil && cost > 0 {
					u.HourlyCost += cost
				}
			}
			if cluster == key.Cluster {
				u.Cluster += int(target)
			}
			seen++
		}
		token = resp.NextPageToken
		if len(token) == 0 || seen >= maxOrgPools {
			return u, nil
		}
	}
}

func (a *Activities) payloads() converter.DataConverter {
	if a.Payloads != nil {
		return a.Payloads
	}
	return converter.GetDefaultDataConverter()
}
