package starter

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// PoolStates are the values the pool workflow publishes as VisorState.
var PoolStates = contract.PoolStates

// StateDeregistered is what a listing shows for a pool whose run
// completed its deregistration (the workflow's last VisorState is
// "deregistering").
const StateDeregistered = "deregistered"

// PoolFilter narrows ListPools; empty fields match every pool.
type PoolFilter struct {
	Org, Project, Service, Provider, Cluster string
	State                                    string
	// Orgs, when Org is empty, limits the listing to these orgs' pools:
	// ListPools sets it to a tenant credential's orgs, since the frontend
	// refuses a tenant's listing of the whole namespace.
	Orgs []string
	// IncludeClosed lists deregistered (completed) and failed pools too.
	IncludeClosed bool
}

// Query is the visibility query for the filter. Every value is checked
// first, so nothing the user typed can change the query's shape.
func (f PoolFilter) Query() (string, error) {
	conds := []string{fmt.Sprintf("WorkflowType = '%s'", contract.PoolWorkflow)}
	for _, c := range []struct{ flag, attr, v string }{
		{"org", contract.SAOrg, f.Org}, {"project", contract.SAProject, f.Project},
		{"service", contract.SAService, f.Service}, {"provider", contract.SAProvider, f.Provider},
		{"cluster", contract.SACluster, f.Cluster},
	} {
		if c.v == "" {
			continue
		}
		if err := types.ValidateDNSLabel(c.flag, c.v); err != nil {
			return "", err
		}
		conds = append(conds, fmt.Sprintf("%s = '%s'", c.attr, c.v))
	}
	if f.Org == "" && len(f.Orgs) > 0 {
		quoted := make([]string, len(f.Orgs))
		for i, org := range f.Orgs {
			if err := types.ValidateDNSLabel("org", org); err != nil {
				return "", err
			}
			quoted[i] = "'" + org + "'"
		}
		conds = append(conds, fmt.Sprintf("%s IN (%s)", contract.SAOrg, strings.Join(quoted, ", ")))
	}
	if f.State != "" {
		if !slices.Contains(PoolStates, f.State) {
			return "", fmt.Errorf("state %q is not one of %s", f.State, strings.Join(PoolStates, ", "))
		}
		conds = append(conds, fmt.Sprintf("%s = '%s'", contract.SAState, f.State))
	}
	if !f.IncludeClosed {
		conds = append(conds, "ExecutionStatus = 'Running'")
	}
	return strings.Join(conds, " AND "), nil
}

// PoolSummary is one pool as the search attributes show it: no query to
// the workflow is needed, so listing thousands of pools is one page walk.
type PoolSummary struct {
	ID          string        `json:"id"`
	Key         types.PoolKey `json:"key"`
	State       string        `json:"state"`
	Nodes       int64         `json:"nodes"`
	TargetNodes int64         `json:"targetNodes"`
	PendingPods int64         `json:"pendingPods"`
	LastScale   time.Time     `json:"lastScale,omitzero"`
	// Status is the run's execution status (Running, Completed, …).
	Status    string    `json:"status"`
	StartedAt time.Time `json:"startedAt"`
	// RunID is the current run, for the Web UI's page of the pool.
	RunID string `json:"runID"`
	// ClusterPhase is the phase of the pool's cluster as the pool last saw it.
	ClusterPhase string `json:"clusterPhase,omitempty"`
	// Reason says briefly why the pool does not act: the pool's own memo
	// line (contract.MemoPoolReason) when it writes one, else what the
	// state and cluster phase tell.
	Reason string `json:"reason,omitempty"`

	// policyHash is the pool's contract.MemoPolicyHash, for apply.
	policyHash string
}

// ListPools runs the filter's visibility query, following every page, and
// returns the pools ordered by ID.
func ListPools(ctx context.Context, c client.Client, namespace string, f PoolFilter) ([]PoolSummary, error) {
	if f.Org == "" && len(f.Orgs) == 0 {
		f.Orgs = tenantOrgs(c)
	}
	query, err := f.Query()
	if err != nil {
		return nil, err
	}
	var out []PoolSummary
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, Query: query, NextPageToken: token, PageSize: 500,
		})
		if err != nil {
			return nil, fmt.Errorf("list pools (%s): %w", query, err)
		}
		for _, e := range resp.GetExecutions() {
			s, err := poolSummary(e.GetExecution().GetWorkflowId(), e.GetSearchAttributes())
			if err != nil {
				return nil, err
			}
			s.Status = e.GetStatus().String()
			s.StartedAt = e.GetStartTime().AsTime()
			s.RunID = e.GetExecution().GetRunId()
			s.Reason = poolReason(s, e.GetMemo())
			// A pool's last published state is "deregistering"; once its
			// run completed, the drain it announced is over.
			if s.State == contract.StateDeregistering && e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				s.State, s.Reason = StateDeregistered, "deregistered: its nodes were released"
			}
			s.policyHash = memoString(e.GetMemo(), contract.MemoPolicyHash)
			out = append(out, s)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].StartedAt.After(out[j].StartedAt)
	})
	return out, nil
}

func poolSummary(id string, sa *commonpb.SearchAttributes) (PoolSummary, error) {
	s := PoolSummary{ID: id}
	if k, err := types.ParsePoolID(id); err == nil {
		s.Key = k
	}
	fields := sa.GetIndexedFields()
	dc := converter.GetDefaultDataConverter()
	decode := func(name string, into any) error {
		p, ok := fields[name]
		if !ok {
			return nil
		}
		if err := dc.FromPayload(p, into); err != nil {
			return fmt.Errorf("%s: search attribute %s: %w", id, name, err)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		into any
	}{
		{contract.SAState, &s.State}, {contract.SANodes, &s.Nodes}, {contract.SATargetNodes, &s.TargetNodes},
		{contract.SAPendingPods, &s.PendingPods}, {contract.SALastScale, &s.LastScale},
		{contract.SAClusterPhase, &s.ClusterPhase},
	} {
		if err := decode(f.name, f.into); err != nil {
			return s, err
		}
	}
	return s, nil
}

// poolReason is the pool's memo line when it has one, else the reason its
// state and cluster phase imply; "" for a pool that acts normally.
func poolReason(s PoolSummary, memo *commonpb.Memo) string {
	if r := memoString(memo, contract.MemoPoolReason); r != "" {
		return r
	}
	switch {
	case s.State == contract.StatePaused:
		return "paused"
	case s.State == contract.StateDeregistering:
		return "draining its nodes, then completing"
	case s.State == contract.StateGated:
		return "cluster " + orUnknown(s.ClusterPhase) + ": no scaling"
	case s.State == contract.StateFrozen:
		return "scale-down frozen"
	case s.ClusterPhase == string(contract.PhaseDraining) && s.PendingPods > 0:
		return "cluster draining: no scale-up"
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "phase unknown"
	}
	return s
}

// memoString reads one string field of a memo; "" when absent or not a string.
func memoString(memo *commonpb.Memo, key string) string {
	p, ok := memo.GetFields()[key]
	if !ok {
		return ""
	}
	var v string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
		return ""
	}
	return v
}
