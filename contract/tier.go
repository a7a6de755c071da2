package contract

import (
	"fmt"
	"time"
)

// BillingTier is how a pool's fleet source is billed (HIP-0121): the
// platform's estate meters node-hours by size; a tenant's own account
// (bring-your-own) meters only the management plane, per pool-hour. It is
// declared on the cluster, never taken from a pool's spec or a client.
type BillingTier string

const (
	// TierManaged: the platform's estate and credentials pay for the nodes.
	TierManaged BillingTier = "managed"
	// TierBYO: the tenant's own cloud account pays for the nodes.
	TierBYO BillingTier = "byo"
)

// UpdateSetTier changes a cluster's billing tier; only a platform
// administrator may (SetTierRequest -> ClusterStatus).
const UpdateSetTier = "set-tier"

// Valid reports whether the tier is one of the two, or empty (managed).
func (t BillingTier) Valid() bool {
	switch t {
	case "", TierManaged, TierBYO:
		return true
	}
	return false
}

// OrManaged is the tier, with empty (declared before tiers) as managed.
func (t BillingTier) OrManaged() BillingTier {
	if t == "" {
		return TierManaged
	}
	return t
}

// ValidateTier names the field when the tier is not one of the two.
func ValidateTier(field string, t BillingTier) error {
	if !t.Valid() {
		return fmt.Errorf("%s %q is not one of managed, byo", field, t)
	}
	return nil
}

// SetTierRequest moves a cluster (and so every pool on it) to a tier.
type SetTierRequest struct {
	Tier        BillingTier    `json:"tier"`
	Reason      string         `json:"reason"`
	RequestedBy string         `json:"requestedBy,omitempty"`
	Auth        *Authorization `json:"auth,omitempty"`
}

// TierChange records an accepted `set-tier`.
type TierChange struct {
	From        BillingTier `json:"from"`
	To          BillingTier `json:"to"`
	Reason      string      `json:"reason"`
	RequestedBy string      `json:"requestedBy,omitempty"`
	At          time.Time   `json:"at"`
}
