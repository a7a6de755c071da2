package starter

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// RotateClusterToken mints a new enrollment token here, sends only its
// hash and report key to the cluster, and returns the token to the caller
// alone. The old token is refused from then on.
func RotateClusterToken(ctx context.Context, c client.Client, cluster, reason, requestedBy string) (string, contract.TokenIssued, error) {
	var issued contract.TokenIssued
	tok, err := contract.MintEnrollmentToken()
	if err != nil {
		return "", issued, err
	}
	req := contract.RotateTokenRequest{TokenHash: tok.Hash, ReportKey: tok.ReportKey, Reason: reason, RequestedBy: requestedBy}
	if req.Auth, err = authorize(c, types.ClusterWorkflowID(cluster), contract.UpdateRotateToken, &req, &req.RequestedBy); err != nil {
		return "", issued, err
	}
	if err := clusterUpdate(ctx, c, cluster, contract.UpdateRotateToken, req, &issued); err != nil {
		return "", issued, err
	}
	return tok.Token, issued, nil
}

// ReportObserved sends the cluster's observed state, signed here with the
// enrollment token (which never leaves this process). ReportedAt defaults
// to now; the cluster ID is filled in.
func ReportObserved(ctx context.Context, c client.Client, clusterID, token string, report contract.ObservedReport) (contract.ClusterStatus, error) {
	var out contract.ClusterStatus
	if report.ClusterID != "" && report.ClusterID != clusterID {
		return out, fmt.Errorf("report is for cluster %q, not %q", report.ClusterID, clusterID)
	}
	report.ClusterID = clusterID
	if report.ReportedAt.IsZero() {
		report.ReportedAt = time.Now()
	}
	if err := report.Validate(); err != nil {
		return out, fmt.Errorf("report for cluster %s: %w", clusterID, err)
	}
	signed, err := contract.SignObservedReport(token, report)
	if err != nil {
		return out, fmt.Errorf("report for cluster %s: %w", clusterID, err)
	}
	return out, clusterUpdate(ctx, c, clusterID, contract.UpdateReportObserved, signed, &out)
}
