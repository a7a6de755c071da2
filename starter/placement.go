package starter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
)

// CheckPlacement refuses a pool whose cluster is not enrolled, is on
// another provider, or does not match the pool's placement, naming every
// mismatch. CheckApply does the same for a whole file, once per cluster.
func CheckPlacement(ctx context.Context, c client.Client, spec contract.PoolSpec) error {
	if err := lookUpCluster(ctx, c, spec.Key.Cluster).fits(spec); err != nil {
		return fmt.Errorf("%s: %w", spec.Key.WorkflowID(), err)
	}
	return nil
}

func placementEmpty(p contract.Placement) bool {
	return len(p.Regions) == 0 && p.Residency == "" && len(p.Capabilities) == 0
}

// PlacementMismatch compares a placement with a cluster's declared region
// and residency and its observed capabilities; nil means it fits.
func PlacementMismatch(p contract.Placement, st contract.ClusterStatus) error {
	d, o := st.Declared, st.Observed
	var errs []error
	if len(p.Regions) > 0 && !slices.Contains(p.Regions, d.Region) {
		errs = append(errs, fmt.Errorf("placement.regions: the pool allows %s; cluster %s is in region %s",
			strings.Join(p.Regions, ", "), d.ID, quotedOrNone(d.Region)))
	}
	if p.Residency != "" && p.Residency != d.Residency {
		errs = append(errs, fmt.Errorf("placement.residency: the pool requires %q; cluster %s declares %s",
			p.Residency, d.ID, quotedOrNone(d.Residency)))
	}
	var missing []string
	for _, capability := range p.Capabilities {
		if !o.Capabilities.Has(capability) {
			missing = append(missing, capability)
		}
	}
	if len(missing) > 0 {
		have := reportedCapabilities(o.Capabilities)
		if o.LastReportAt.IsZero() {
			have = "nothing yet: its agent has not reported"
		}
		errs = append(errs, fmt.Errorf("placement.capabilities: the pool requires %s; cluster %s does not report %s (it reports %s)",
			strings.Join(p.Capabilities, ", "), d.ID, strings.Join(missing, ", "), have))
	}
	return errors.Join(errs...)
}

func reportedCapabilities(c contract.Capabilities) string {
	var have []string
	for _, name := range []string{"mig", "nvlink", "rdma"} {
		if c.Has(name) {
			have = append(have, name)
		}
	}
	if len(have) == 0 {
		return "none"
	}
	return strings.Join(have, ", ")
}

func quotedOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}
