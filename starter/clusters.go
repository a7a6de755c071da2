package starter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workflows"
)

// TokenPrefix marks Visor enrollment tokens so a leaked one is recognisable.
const TokenPrefix = "vfe1."

// NewEnrollmentToken mints a token (prefix + 256 random bits) and its hash;
// only the hash is stored.
func NewEnrollmentToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the stored form of a token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// EnrollCluster starts the cluster's workflow if it is not running and
// returns a fresh token; an already-running cluster is left as it is and
// returns "" (use token rotation to mint a new one).
func EnrollCluster(ctx context.Context, c client.Client, d contract.ClusterDeclared, taskQueue string) (token string, created bool, err error) {
	if d.Phase == "" {
		d.Phase = contract.PhasePending
	}
	if err := d.Validate(); err != nil {
		return "", false, fmt.Errorf("cluster %s: %w", d.ID, err)
	}
	id := types.ClusterWorkflowID(d.ID)
	running, err := isRunning(ctx, c, id)
	if err != nil || running {
		return "", false, err
	}
	token, hash, err := NewEnrollmentToken()
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
		ID:                       id,
		TaskQueue:                orDefault(taskQueue),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    temporal.NewSearchAttributes(sa...),
		StaticSummary:            fmt.Sprintf("cluster %s (%s, %s)", d.ID, d.Provider, d.Region),
	}, contract.ClusterWorkflow, workflows.ClusterInput{Declared: d, TokenHash: hash})
	if err != nil {
		return "", false, fmt.Errorf("enroll cluster %s: %w", d.ID, err)
	}
	return token, true, nil
}

// ClusterStatus runs the cluster's `status` query.
func ClusterStatus(ctx context.Context, c client.Client, cluster string) (contract.ClusterStatus, error) {
	var st contract.ClusterStatus
	resp, err := c.QueryWorkflow(ctx, types.ClusterWorkflowID(cluster), "", contract.QueryClusterStatus)
	if err != nil {
		return st, fmt.Errorf("status of cluster %s: %w", cluster, err)
	}
	return st, resp.Get(&st)
}

// SetClusterPhase runs the validated `set-phase` update.
func SetClusterPhase(ctx context.Context, c client.Client, cluster string, req contract.SetPhaseRequest) (contract.ClusterStatus, error) {
	var out contract.ClusterStatus
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: types.ClusterWorkflowID(cluster), UpdateName: contract.UpdateSetPhase, Args: []any{req},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return out, fmt.Errorf("set-phase %s: %w", cluster, err)
	}
	if err := h.Get(ctx, &out); err != nil {
		return out, fmt.Errorf("set-phase %s: %w", cluster, err)
	}
	return out, nil
}
