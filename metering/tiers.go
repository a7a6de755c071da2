package metering

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
)

// TierChange says: from From on, the pool is billed under Tier.
type TierChange struct {
	Tier contract.BillingTier `json:"tier"`
	From time.Time            `json:"from"`
}

// Tiers is a pool's billing-tier history and lifespan, kept in workflow
// state beside its Timeline. Pure: it reads only its arguments.
//
// An hour is billed under one tier, the one that held when the hour
// began (ForHour): a change inside an hour takes effect from the next
// hour, so no hour is billed under two tiers or twice. The pool's first
// hour takes the first tier known in it, since the gate that names the
// tier arrives a moment after the pool starts.
type Tiers struct {
	// Start is when the pool began metering; End when it deregistered
	// (zero while it runs). Pool-hours are the part of an hour in between.
	Start   time.Time    `json:"start,omitzero"`
	End     time.Time    `json:"end,omitzero"`
	Changes []TierChange `json:"changes,omitempty"`
}

// Current is the tier in force now (managed when none was told).
func (t *Tiers) Current() contract.BillingTier {
	if n := len(t.Changes); n > 0 {
		return t.Changes[n-1].Tier
	}
	return contract.TierManaged
}

// Record notes that from at the pool is billed under tier. It reports
// whether the tier changed; an unknown tier or a change dated before the
// last one is an error and changes nothing.
func (t *Tiers) Record(tier contract.BillingTier, at time.Time) (bool, error) {
	if err := contract.ValidateTier("tier", tier); err != nil {
		return false, err
	}
	if at.IsZero() {
		return false, fmt.Errorf("tier change time is zero")
	}
	tier = tier.OrManaged()
	n := len(t.Changes)
	if n > 0 && at.Before(t.Changes[n-1].From) {
		return false, fmt.Errorf("tier change at %s is before the last one at %s", at.UTC().Format(time.RFC3339Nano), t.Changes[n-1].From.Format(time.RFC3339Nano))
	}
	if n > 0 && t.Changes[n-1].Tier == tier {
		return false, nil
	}
	t.Changes = append(t.Changes, TierChange{Tier: tier, From: at.UTC()})
	return true, nil
}

// ForHour is the tier the UTC hour containing hour is billed under: the
// last one told at or before the hour's start, else the first one told
// within the hour, else managed.
func (t Tiers) ForHour(hour time.Time) contract.BillingTier {
	start := hour.UTC().Truncate(time.Hour)
	tier := contract.BillingTier("")
	for _, c := range t.Changes {
		if c.From.After(start) {
			if tier == "" && c.From.Before(start.Add(time.Hour)) {
				tier = c.Tier
			}
			break
		}
		tier = c.Tier
	}
	return tier.OrManaged()
}

// PoolHours is the part of the UTC hour containing hour during which the
// pool existed, between Start and End: 1 for a whole hour.
func (t Tiers) PoolHours(hour time.Time) float64 {
	if t.Start.IsZero() {
		return 0
	}
	from := hour.UTC().Truncate(time.Hour)
	to := from.Add(time.Hour)
	if t.Start.After(from) {
		from = t.Start
	}
	if !t.End.IsZero() && t.End.Before(to) {
		to = t.End
	}
	if !to.After(from) {
		return 0
	}
	return float64(to.Sub(from)) / float64(time.Hour)
}

// Prune drops the changes no hour at or after before needs, keeping the
// one in force at before.
func (t *Tiers) Prune(before time.Time) {
	keepFrom := 0
	for i, c := range t.Changes {
		if !c.From.After(before) {
			keepFrom = i
		}
	}
	if keepFrom > 0 {
		t.Changes = append([]TierChange(nil), t.Changes[keepFrom:]...)
	}
}
