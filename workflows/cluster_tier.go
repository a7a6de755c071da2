package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
)

// The billing tier is the platform's to set: moving a cluster from managed
// to BYO stops billing its nodes, so the owner org may not do it, only a
// platform administrator (a caller for every org).

func (c *cluster) validateSetTier(ctx workflow.Context, req contract.SetTierRequest) error {
	if err := c.authorizePlatform(ctx, contract.UpdateSetTier, req, req.Auth); err != nil {
		return refused(ctx, c, contract.UpdateSetTier, err)
	}
	var errs []error
	switch {
	case req.Tier == "" || !req.Tier.Valid():
		errs = append(errs, fmt.Errorf("tier %q is not one of managed, byo", req.Tier))
	case req.Tier == c.state.Declared.Tier.OrManaged():
		errs = append(errs, fmt.Errorf("tier: cluster %s is already %s", c.state.Declared.ID, req.Tier))
	}
	if strings.TrimSpace(req.Reason) == "" {
		errs = append(errs, errors.New("reason is empty: say why the tier changes"))
	}
	return refused(ctx, c, contract.UpdateSetTier, errors.Join(errs...))
}

// authorizePlatform admits only a platform administrator, with the
// worker's trust (validators never run on replay).
func (c *cluster) authorizePlatform(ctx workflow.Context, message string, req any, a *contract.Authorization) error {
	return c.authorizeCaller(ctx, message, req, a, func(caller auth.Caller) error {
		if !caller.MayActFor(auth.AllOrgs) {
			return fmt.Errorf("%s refused: caller %q may act for %s; a cluster's billing tier is set by a platform administrator only",
				message, caller.Subject, orgList(caller.Orgs))
		}
		return nil
	})
}

// handleSetTier returns once every pool on the cluster was told the new
// gate, as set-phase does.
func (c *cluster) handleSetTier(ctx workflow.Context, req contract.SetTierRequest) (contract.ClusterStatus, error) {
	req.RequestedBy = c.acceptedBy(ctx, req.Auth, req.RequestedBy)
	s := c.state
	s.LastTierChange = &contract.TierChange{From: s.Declared.Tier.OrManaged(), To: req.Tier, Reason: req.Reason, RequestedBy: req.RequestedBy, At: workflow.Now(ctx)}
	s.Declared.Tier = req.Tier
	workflow.GetLogger(ctx).Info("cluster tier set", "cluster", s.Declared.ID, "from", s.LastTierChange.From, "to", req.Tier, "reason", req.Reason, "by", req.RequestedBy)
	return c.fanOutAndWait(ctx)
}
