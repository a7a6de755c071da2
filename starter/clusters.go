package starter

import (
	"context"
	"errors"
	"fmt"
	"sort"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// EnrollCluster starts the cluster's workflow if it is not running and
// returns its freshly minted enrollment token, which exists nowhere else:
// only its hash and report key go to Temporal. An already-running cluster
// is left as it is and returns "" (rotate the token to mint a new one).
// The metrics label defaults to the cluster ID and must not be used by
// another running cluster.
func EnrollCluster(ctx context.Context, c client.Client, d contract.ClusterDeclared, taskQueue string) (token string, created bool, err error) {
	if d.Phase == "" {
		d.Phase = contract.PhasePending
	}
	if d.MetricsLabel == "" {
		d.MetricsLabel = d.ID
	}
	if err := d.Validate(); err != nil {
		return "", false, fmt.Errorf("cluster %s: %w", d.ID, err)
	}
	id := types.ClusterWorkflowID(d.ID)
	running, err := isRunning(ctx, c, id)
	if err != nil || running {
		return "", false, err
	}
	if err := checkMetricsLabel(ctx, c, d); err != nil {
		return "", false, err
	}
	tok, err := contract.MintEnrollmentToken()
	if err != nil {
		return "", false, err
	}
	sa := []temporal.SearchAttributeUpdate{
		temporal.NewSearchAttributeKeyKeyword(contract.SACluster).ValueSet(d.ID),
		temporal.NewSearchAttributeKeyKeyword(contract.SAProvider).ValueSet(d.Provider),
		temporal.NewSearchAttributeKeyKeyword(contract.SAClusterPhase).ValueSet(string(d.Phase)),
	}
	if d.Region != "" {
		sa = append(sa, temporal.NewSearchAttributeKeyKeyword(contract.SARegion).ValueSet(d.Region))
	}
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: orDefault(taskQueue),
		// Fail rather than join a run someone else started meanwhile: its
		// token is not the one minted here.
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sa...),
		Memo:                     map[string]any{contract.MemoClusterDeclared: d},
		StaticSummary:            fmt.Sprintf("cluster %s (%s, %s)", d.ID, d.Provider, d.Region),
		// Ahead of its pools' tasks in the queue (its runs inherit it): a
		// cluster starved behind 10,000 pools' first tasks went stale and
		// closed every pool's gate.
		Priority: temporal.Priority{PriorityKey: contract.ClusterPriorityKey},
	}, contract.ClusterWorkflow, contract.ClusterStart{Declared: d, TokenHash: tok.Hash, ReportKey: tok.ReportKey})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("enroll cluster %s: %w", d.ID, err)
	}
	return tok.Token, true, nil
}

// checkMetricsLabel refuses a label another running cluster carries: two
// clusters with one label are indistinguishable in the metrics store. It
// reads visibility, so two enrollments racing within visibility's delay
// (milliseconds on the embedded server) could both pass.
func checkMetricsLabel(ctx context.Context, c client.Client, d contract.ClusterDeclared) error {
	clusters, err := ListClusters(ctx, c, false)
	if err != nil {
		return fmt.Errorf("cluster %s: check metricsLabel %q is unique: %w", d.ID, d.MetricsLabel, err)
	}
	for _, other := range clusters {
		if other.ID != d.ID && other.Declared.MetricsLabel == d.MetricsLabel {
			return fmt.Errorf("cluster %s: metricsLabel %q is already used by cluster %s; two clusters with one label cannot be told apart in the metrics store, choose another",
				d.ID, d.MetricsLabel, other.ID)
		}
	}
	return nil
}

// ClusterEntry is one enrolled cluster as listed: its declared half from
// the workflow's memo and, if asked for, its full status.
type ClusterEntry struct {
	ID          string                   `json:"id"`
	Declared    contract.ClusterDeclared `json:"declared"`
	Status      *contract.ClusterStatus  `json:"status,omitempty"`
	StatusError string                   `json:"statusError,omitempty"`
}

// ListClusters lists the running cluster workflows, sorted by ID. With
// withStatus it queries each (which needs a worker); without, it reads only
// visibility.
func ListClusters(ctx context.Context, c client.Client, withStatus bool) ([]ClusterEntry, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", contract.ClusterWorkflow)
	var out []ClusterEntry
	var page []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: page})
		if err != nil {
			return nil, fmt.Errorf("list clusters: %w", err)
		}
		for _, ex := range resp.Executions {
			e := ClusterEntry{ID: clusterIDOf(ex.Execution.WorkflowId)}
			p, haveMemo := ex.GetMemo().GetFields()[contract.MemoClusterDeclared]
			if haveMemo {
				if err := converter.GetDefaultDataConverter().FromPayload(p, &e.Declared); err != nil {
					haveMemo = false
				}
			}
			if withStatus || !haveMemo {
				st, err := ClusterStatus(ctx, c, e.ID)
				if err != nil {
					e.StatusError = err.Error()
					if !haveMemo {
						return nil, fmt.Errorf("cluster %s has no declared memo and did not answer its status query: %w", e.ID, err)
					}
				} else {
					e.Declared = st.Declared
					if withStatus {
						e.Status = &st
					}
				}
			}
			out = append(out, e)
		}
		if page = resp.NextPageToken; len(page) == 0 {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func clusterIDOf(workflowID string) string {
	const prefix = "cluster/"
	if len(workflowID) > len(prefix) && workflowID[:len(prefix)] == prefix {
		return workflowID[len(prefix):]
	}
	return workflowID
}

// ClusterStatus runs the cluster's `status` query, retrying transient
// failures; with a tenant's credential its `public-status` one (no pools:
// the frontend refuses a tenant the full status, which names every org's
// pools).
func ClusterStatus(ctx context.Context, c client.Client, cluster string) (contract.ClusterStatus, error) {
	var st contract.ClusterStatus
	name := contract.QueryClusterStatus
	if tenantOrgs(c) != nil {
		name = contract.QueryClusterPublic
	}
	err := query(ctx, c, types.ClusterWorkflowID(cluster), name, &st)
	if isNotFound(err) {
		return st, fmt.Errorf("cluster %s is not enrolled", cluster)
	}
	if err != nil {
		return st, fmt.Errorf("status of cluster %s: %w", cluster, err)
	}
	return st, nil
}

// SetClusterPhase runs the validated `set-phase` update. It returns once
// every pool on the cluster has been signalled the new gate.
func SetClusterPhase(ctx context.Context, c client.Client, cluster string, req contract.SetPhaseRequest) (contract.ClusterStatus, error) {
	var out contract.ClusterStatus
	var err error
	if req.Auth, err = authorize(c, types.ClusterWorkflowID(cluster), contract.UpdateSetPhase, &req, &req.RequestedBy); err != nil {
		return out, err
	}
	return out, clusterUpdate(ctx, c, cluster, contract.UpdateSetPhase, req, &out)
}

func clusterUpdate(ctx context.Context, c client.Client, cluster, name string, arg, out any) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: types.ClusterWorkflowID(cluster), UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if isNotFound(err) {
		return fmt.Errorf("%s: cluster %s is not enrolled", name, cluster)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, cluster, err)
	}
	if err := h.Get(ctx, out); err != nil {
		return fmt.Errorf("%s %s: %w", name, cluster, err)
	}
	return nil
}
