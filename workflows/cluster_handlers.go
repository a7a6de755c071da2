package workflows

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// registerHandlers wires the cluster's contract. Validators run before an
// update is accepted, so a refused one never enters history and changes
// nothing; refusals are logged by the worker.
func (c *cluster) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, contract.QueryClusterStatus, func() (contract.ClusterStatus, error) {
		return c.status(), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, contract.QueryClusterPublic, func() (contract.ClusterStatus, error) {
		st := c.status()
		st.Pools = nil // every org's pool IDs: not for a tenant
		return st, nil
	}); err != nil {
		return err
	}
	handlers := []struct {
		name      string
		handler   any
		validator any
	}{
		{contract.UpdateSetPhase, c.handleSetPhase, c.validateSetPhase},
		{contract.UpdateReportObserved, c.handleReport, c.validateReport},
		{contract.UpdateRotateToken, c.handleRotateToken, c.validateRotateToken},
		{contract.UpdateSetTier, c.handleSetTier, c.validateSetTier}, // cluster_tier.go
	}
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler, workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return err
		}
	}
	return nil
}

// authorizeAdmin checks that a cluster update comes from a platform
// administrator (a caller for every org) or one of the cluster's owner
// org, with the worker's trust (validators never run on replay).
func (c *cluster) authorizeAdmin(ctx workflow.Context, message string, req any, a *contract.Authorization) error {
	return c.authorizeCaller(ctx, message, req, a, func(caller auth.Caller) error {
		owner := c.state.Declared.Owner
		if !caller.MayActFor(auth.AllOrgs) && (owner == "" || !caller.MayActFor(owner)) {
			return fmt.Errorf("%s refused: caller %q may act for %s; cluster changes need a platform administrator or the owner org %q",
				message, caller.Subject, orgList(caller.Orgs), owner)
		}
		return nil
	})
}

// authorizeCaller verifies a cluster update's signed request with the
// worker's trust (validators never run on replay; without trust every
// caller is admitted) and then asks may about the verified caller.
func (c *cluster) authorizeCaller(ctx workflow.Context, message string, req any, a *contract.Authorization, may func(auth.Caller) error) error {
	au := validatorAuthority()
	if au.open() {
		return nil
	}
	caller, err := au.caller(types.ClusterWorkflowID(c.state.Declared.ID), message, req, a, c.state.Nonces, workflow.Now(ctx))
	if err != nil {
		return err
	}
	return may(caller)
}

// acceptedBy records an accepted request's nonce and names its sender.
func (c *cluster) acceptedBy(ctx workflow.Context, a *contract.Authorization, requestedBy string) string {
	if c.state.Nonces == nil {
		c.state.Nonces = map[string]time.Time{}
	}
	remember(c.state.Nonces, a, workflow.Now(ctx))
	if s := subjectOf(a); s != "" {
		return s
	}
	return requestedBy
}

func (c *cluster) validateSetPhase(ctx workflow.Context, req contract.SetPhaseRequest) error {
	if err := c.authorizeAdmin(ctx, contract.UpdateSetPhase, req, req.Auth); err != nil {
		return refused(ctx, c, contract.UpdateSetPhase, err)
	}
	var errs []error
	if !req.Phase.Valid() {
		errs = append(errs, fmt.Errorf("phase %q is not one of pending, active, draining, disabled", req.Phase))
	}
	if strings.TrimSpace(req.Reason) == "" {
		errs = append(errs, errors.New("reason is empty: say why the phase changes"))
	}
	return refused(ctx, c, contract.UpdateSetPhase, errors.Join(errs...))
}

// handleSetPhase returns once the loop has fanned the new gate out, so a
// caller that sees the update complete knows every pool was told.
func (c *cluster) handleSetPhase(ctx workflow.Context, req contract.SetPhaseRequest) (contract.ClusterStatus, error) {
	req.RequestedBy = c.acceptedBy(ctx, req.Auth, req.RequestedBy)
	s := c.state
	s.LastPhaseChange = &contract.PhaseChange{From: s.Declared.Phase, To: req.Phase, Reason: req.Reason, RequestedBy: req.RequestedBy, At: workflow.Now(ctx)}
	s.Declared.Phase = req.Phase
	workflow.GetLogger(ctx).Info("cluster phase set", "cluster", s.Declared.ID, "from", s.LastPhaseChange.From, "to", req.Phase, "reason", req.Reason, "by", req.RequestedBy)
	return c.fanOutAndWait(ctx)
}

// fanOutAndWait wakes the loop to tell the pools the changed gate and
// returns once it has, so a caller that sees the update complete knows
// every pool was told.
func (c *cluster) fanOutAndWait(ctx workflow.Context) (contract.ClusterStatus, error) {
	c.phaseSeq++
	seq := c.phaseSeq
	c.wake.SendAsync(true)
	if err := workflow.Await(ctx, func() bool { return c.fannedSeq >= seq }); err != nil {
		return contract.ClusterStatus{}, err
	}
	return c.status(), nil
}

func (c *cluster) validateReport(ctx workflow.Context, r contract.ObservedReport) error {
	return refused(ctx, c, contract.UpdateReportObserved, c.checkReport(workflow.Now(ctx), r))
}

// checkReport authenticates before it looks at time, so a caller without
// the token learns nothing but that its signature is wrong.
func (c *cluster) checkReport(now time.Time, r contract.ObservedReport) error {
	s := c.state
	if err := r.Validate(); err != nil {
		return fmt.Errorf("report refused: %w", err)
	}
	if r.ClusterID != s.Declared.ID {
		return fmt.Errorf("report refused: it is for cluster %q, this is cluster %q", r.ClusterID, s.Declared.ID)
	}
	if s.ReportKey == "" {
		return fmt.Errorf("report refused: cluster %s has no report key; rotate its token (visor cluster rotate-token %s)", s.Declared.ID, s.Declared.ID)
	}
	if err := r.VerifySignature(s.ReportKey); err != nil {
		return fmt.Errorf("report refused: %w", err)
	}
	if skew := now.Sub(r.ReportedAt); skew > contract.MaxReportSkew || skew < -contract.MaxReportSkew {
		return fmt.Errorf("report refused: reportedAt %s is %s from the workflow's clock, more than %s: a replay or a skewed agent clock",
			r.ReportedAt.UTC().Format(time.RFC3339), skew.Round(time.Second), contract.MaxReportSkew)
	}
	if !r.ReportedAt.After(s.AgentReportedAt) {
		return fmt.Errorf("report refused: reportedAt %s is not after the last accepted report's (%s): a replay",
			r.ReportedAt.UTC().Format(time.RFC3339Nano), s.AgentReportedAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func (c *cluster) handleReport(ctx workflow.Context, r contract.ObservedReport) (contract.ClusterStatus, error) {
	c.applyAgentReport(workflow.Now(ctx), r)
	c.wake.SendAsync(true)
	return c.status(), nil
}

func (c *cluster) validateRotateToken(ctx workflow.Context, req contract.RotateTokenRequest) error {
	if err := c.authorizeAdmin(ctx, contract.UpdateRotateToken, req, req.Auth); err != nil {
		return refused(ctx, c, contract.UpdateRotateToken, err)
	}
	var errs []error
	if b, err := hex.DecodeString(req.TokenHash); err != nil || len(b) != 32 || strings.ToLower(req.TokenHash) != req.TokenHash {
		errs = append(errs, errors.New("tokenHash is not a lower-case hex SHA-256"))
	} else if req.TokenHash == c.state.TokenHash {
		errs = append(errs, errors.New("tokenHash is the current token's: mint a new token"))
	}
	if _, err := contract.DecodeReportKey(req.ReportKey); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(req.Reason) == "" {
		errs = append(errs, errors.New("reason is empty: say why the token is rotated"))
	}
	return refused(ctx, c, contract.UpdateRotateToken, errors.Join(errs...))
}

func (c *cluster) handleRotateToken(ctx workflow.Context, req contract.RotateTokenRequest) (contract.TokenIssued, error) {
	req.RequestedBy = c.acceptedBy(ctx, req.Auth, req.RequestedBy)
	s := c.state
	old := contract.TokenFingerprint(s.TokenHash)
	s.TokenHash, s.ReportKey, s.TokenIssuedAt = req.TokenHash, req.ReportKey, workflow.Now(ctx)
	workflow.GetLogger(ctx).Info("enrollment token rotated", "cluster", s.Declared.ID, "old", old,
		"new", contract.TokenFingerprint(req.TokenHash), "reason", req.Reason, "by", req.RequestedBy)
	c.wake.SendAsync(true)
	return contract.TokenIssued{Cluster: s.Declared.ID, Fingerprint: contract.TokenFingerprint(req.TokenHash), IssuedAt: s.TokenIssuedAt}, nil
}

// refused logs a validator's refusal on the worker: it leaves no trace in
// history, so the log is where an operator sees bad or revoked tokens.
func refused(ctx workflow.Context, c *cluster, update string, err error) error {
	if err != nil {
		workflow.GetLogger(ctx).Warn("refused "+update, "cluster", c.state.Declared.ID, "error", err)
	}
	return err
}
