package workflows

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// handlers answer the pool's updates and queries: each checks its input,
// then hands it to the loop through the state; none acts itself.
type handlers struct{ *pool }

// registerHandlers wires the contract of docs/design.md. Validators run before an
// update is accepted, so a rejected one never enters history.
func (p handlers) registerHandlers(ctx workflow.Context) error {
	handlers := []struct {
		name      string
		handler   any
		validator any
	}{
		{contract.UpdateScale, p.handleScale, p.validateScale},
		{contract.UpdateSetPolicy, p.handleSetPolicy, p.validateSetPolicy},
		{contract.UpdatePause, p.handlePause, p.validatePause},
		{contract.UpdateResume, p.handleResume, p.validateResume},
		{contract.UpdateDeregister, p.handleDeregister, p.validateDeregister},
	}
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler, workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return err
		}
	}
	return workflow.SetQueryHandler(ctx, contract.QueryStatus, func() (contract.PoolStatus, error) {
		return p.status(), nil
	})
}

// authorize checks the caller of an update against the pool's org with
// the worker's trust (validators never run on replay).
func (p handlers) authorize(ctx workflow.Context, message string, req any, a *contract.Authorization) error {
	_, err := validatorAuthority().forOrg(p.spec.Key, message, req, a, p.state.Nonces, workflow.Now(ctx))
	if err != nil {
		workflow.GetLogger(ctx).Warn("refused "+message, "pool", p.spec.Key.WorkflowID(), "error", err)
	}
	return err
}

// accepted records an accepted request's nonce and returns who sent it:
// the verified subject when signed, else what the request says.
func (p handlers) accepted(ctx workflow.Context, a *contract.Authorization, requestedBy string) string {
	remember(p.state.Nonces, a, workflow.Now(ctx))
	if s := subjectOf(a); s != "" {
		return s
	}
	return requestedBy
}

func (p handlers) validateScale(ctx workflow.Context, req contract.ScaleRequest) error {
	if err := p.authorize(ctx, contract.UpdateScale, req, req.Auth); err != nil {
		return err
	}
	var errs []error
	pol := p.state.Policy
	if p.state.Deregistering {
		return errors.New("pool is deregistering: scale refused")
	}
	if req.Target < pol.MinNodes || req.Target > pol.MaxNodes {
		errs = append(errs, fmt.Errorf("target %d is outside [minNodes %d, maxNodes %d]", req.Target, pol.MinNodes, pol.MaxNodes))
	}
	if strings.TrimSpace(req.Reason) == "" {
		errs = append(errs, errors.New("reason is empty: say why the pool is scaled by hand"))
	}
	errs = append(errs, poolcore.CheckText("reason", req.Reason), poolcore.CheckText("requestedBy", req.RequestedBy))
	if req.Hold < 0 || req.Hold.D() > contract.MaxHold {
		errs = append(errs, fmt.Errorf("hold %s must be between 0 and %s", req.Hold, contract.MaxHold))
	}
	return errors.Join(errs...)
}

func (p handlers) handleScale(ctx workflow.Context, req contract.ScaleRequest) (contract.ScaleAccepted, error) {
	req.RequestedBy = p.accepted(ctx, req.Auth, req.RequestedBy)
	seq := p.state.NextSeq()
	p.state.ManualTarget = &poolcore.ManualScale{Seq: seq, Target: req.Target, Reason: req.Reason, RequestedBy: req.RequestedBy, Hold: req.Hold}
	p.wake.SendAsync(true)
	return contract.ScaleAccepted{Seq: seq, From: p.state.NodeCount(), Target: req.Target, Reason: req.Reason}, nil
}

// applyForceScale is the fire-and-forget `force-scale` signal: clamped to
// [min, max] and recorded rather than rejected.
func (p handlers) applyForceScale(ctx workflow.Context, req contract.ScaleRequest) {
	if p.state.Deregistering {
		p.reject(ctx, "force-scale", errors.New("pool is deregistering"))
		return
	}
	if err := errors.Join(poolcore.CheckText("reason", req.Reason), poolcore.CheckText("requestedBy", req.RequestedBy)); err != nil {
		p.reject(ctx, "force-scale", err)
		return
	}
	if !p.auth.open() {
		// A signal has no validator: verify with the run's recorded trust.
		if _, err := p.auth.forOrg(p.spec.Key, contract.SignalForceScale, req, req.Auth, p.state.Nonces, workflow.Now(ctx)); err != nil {
			p.reject(ctx, "force-scale", err)
			return
		}
		req.RequestedBy = p.accepted(ctx, req.Auth, req.RequestedBy)
	}
	pol := p.state.Policy
	target := min(max(req.Target, pol.MinNodes), pol.MaxNodes)
	reason := req.Reason
	if strings.TrimSpace(reason) == "" {
		reason = "force-scale (no reason given)"
	}
	if target != req.Target {
		reason += fmt.Sprintf(" (target %d clamped to %d)", req.Target, target)
	}
	p.state.ManualTarget = &poolcore.ManualScale{Seq: p.state.NextSeq(), Target: target, Reason: reason, RequestedBy: req.RequestedBy}
}

func (p handlers) validateSetPolicy(ctx workflow.Context, req contract.SetPolicyRequest) error {
	if err := p.authorize(ctx, contract.UpdateSetPolicy, req, req.Auth); err != nil {
		return err
	}
	if !reflect.DeepEqual(req.OrgLimits, p.state.Policy.OrgLimits) && !validatorAuthority().open() {
		// The org's ceilings are the platform's to set, not the tenant's.
		if c, err := auth.ReadCertInfo(req.Auth.Cert); err != nil || !slices.Contains(c.Orgs, auth.AllOrgs) {
			return errors.New("set-policy refused: orgLimits may be changed by a platform administrator only")
		}
	}
	if p.state.Deregistering {
		return errors.New("pool is deregistering: set-policy refused")
	}
	return req.Policy.Validate()
}

// handleSetPolicy takes SetPolicyRequest, whose policy fields sit at the
// top level, so the bare policies recorded before it decode the same.
func (p handlers) handleSetPolicy(ctx workflow.Context, req contract.SetPolicyRequest) (contract.PolicyAccepted, error) {
	p.accepted(ctx, req.Auth, "")
	pol := req.Policy
	p.state.Policy = pol
	p.policyChanged = true
	// A pod that fit no size may fit one the new policy allows, and one a
	// purchase did not help may be helped by another.
	p.state.Unplaceable = map[string]string{}
	p.state.NoHelp = map[string]string{}
	p.wake.SendAsync(true)
	return contract.PolicyAccepted{Policy: pol}, nil
}

func (p handlers) validatePause(ctx workflow.Context, req contract.PauseRequest) error {
	return p.validatePauseOrResume(ctx, contract.UpdatePause, req)
}

func (p handlers) validateResume(ctx workflow.Context, req contract.PauseRequest) error {
	return p.validatePauseOrResume(ctx, contract.UpdateResume, req)
}

func (p handlers) validatePauseOrResume(ctx workflow.Context, message string, req contract.PauseRequest) error {
	if err := p.authorize(ctx, message, req, req.Auth); err != nil {
		return err
	}
	if p.state.Deregistering {
		return errors.New("pool is deregistering")
	}
	return errors.Join(poolcore.CheckText("reason", req.Reason), poolcore.CheckText("requestedBy", req.RequestedBy))
}

func (p handlers) validateDeregister(ctx workflow.Context, req contract.DeregisterRequest) error {
	if err := p.authorize(ctx, contract.UpdateDeregister, req, req.Auth); err != nil {
		return err
	}
	return errors.Join(poolcore.CheckText("reason", req.Reason), poolcore.CheckText("requestedBy", req.RequestedBy))
}

func (p handlers) handlePause(ctx workflow.Context, req contract.PauseRequest) (contract.PoolStatus, error) {
	req.RequestedBy = p.accepted(ctx, req.Auth, req.RequestedBy)
	p.state.Paused = true
	p.state.PausedReason = strings.TrimSpace(req.Reason + " " + by(req.RequestedBy))
	p.wake.SendAsync(true)
	return p.status(), nil
}

func (p handlers) handleResume(ctx workflow.Context, req contract.PauseRequest) (contract.PoolStatus, error) {
	p.accepted(ctx, req.Auth, req.RequestedBy)
	p.state.Paused, p.state.PausedReason = false, ""
	p.wake.SendAsync(true)
	return p.status(), nil
}

func (p handlers) handleDeregister(ctx workflow.Context, req contract.DeregisterRequest) (contract.PoolStatus, error) {
	p.accepted(ctx, req.Auth, req.RequestedBy)
	p.state.Deregistering = true
	p.wake.SendAsync(true)
	return p.status(), nil
}

func by(who string) string {
	if who == "" {
		return ""
	}
	return "(by " + who + ")"
}

// status is the `status` query's answer.
func (p handlers) status() contract.PoolStatus {
	s := p.state
	st := contract.PoolStatus{
		Key: p.spec.Key, State: p.state.StateName(p.last.Frozen), Policy: s.Policy, Paused: s.Paused, PausedReason: s.PausedReason,
		Deregistering: s.Deregistering, Nodes: s.ObservedNodes(), TargetNodes: s.NodeCount(), PendingPods: s.PendingPods(),
		Seq: s.Seq, LastScaleUp: s.LastScaleUp, LastScaleDown: s.LastScaleDown, IdleSince: s.IdleSince,
		Unplaceable: s.Unplaceable, DrainBlocked: p.state.DrainBlockedStatus(p.last.Held), Frozen: p.last.Frozen, Blocked: p.last.Blocked,
		NextWake: p.timerAt, NextWakeReason: p.last.WakeReason, Cluster: s.Gate, Decisions: s.Decisions,
		LastRejected: s.LastRejected, Observation: s.Observation, MeteredThrough: s.MeterCursor,
		ContinuedAsNew: s.ContinuedAsNew,
		InFlight:       s.InFlight(), NoHelp: s.NoHelp, Deferred: len(s.Deferred), SizeBackoff: s.SizeBackoff,
		UnavailableOffering: s.UnavailableOffering,
		NotReadySince:       s.NotReadySince, Repairs: s.Repairs, Rejected: s.Rejected, SkippedNodes: p.last.Skipped, HeldIdle: p.last.Held,
		AddedWithoutProgress: p.decided.AddedWithoutProgress, Removing: p.removal,
		Capacity: p.decided.Capacity, Budget: s.Budget, OrgCeiling: s.OrgNote, Forecast: s.ForecastStatus(),
	}
	if p.decided.At.Before(s.HoldUntil) {
		st.HoldTarget, st.HoldUntil = s.HoldTarget, s.HoldUntil
	}
	s.TierStatus(&st)
	s.LifecycleStatus(&st, p.decided.Due, p.rules)
	if s.Provider != nil {
		st.ProviderTarget, st.ProviderReadAt = s.Provider.Target(), s.Provider.ReadAt
	}
	if s.Observation != nil {
		st.LastObservationAt = s.Observation.ObservedAt
	}
	return st
}
