package metering

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
)

func TestTierOfAnHourIsTheOneThatHeldWhenItBegan(t *testing.T) {
	var tiers Tiers
	tiers.Start = at(9, 0).Add(20 * 60e9)
	// The pool starts at 09:20 and hears its tier (BYO) a moment later;
	// the cluster moves to managed at 11:40 and back to BYO at 12:00.
	for _, c := range []TierChange{{contract.TierBYO, at(9, 21)}, {contract.TierManaged, at(11, 40)}, {contract.TierBYO, at(12, 0)}} {
		changed, err := tiers.Record(c.Tier, c.From)
		require.NoError(t, err)
		require.True(t, changed)
	}
	changed, err := tiers.Record(contract.TierBYO, at(12, 30))
	require.NoError(t, err)
	require.False(t, changed, "the same tier again is no change")

	want := map[int]contract.BillingTier{
		8:  contract.TierManaged, // before anything was known
		9:  contract.TierBYO,     // first hour: the first tier told in it
		10: contract.TierBYO,
		11: contract.TierBYO, // the change at 11:40 waits for the next hour
		12: contract.TierBYO, // managed held only from 11:40 to 12:00: at 12:00 it is BYO again
		13: contract.TierBYO,
	}
	for h, tier := range want {
		require.Equal(t, tier, tiers.ForHour(at(h, 0)), "hour %d", h)
		require.Equal(t, tier, tiers.ForHour(at(h, 59)), "hour %d asked late", h)
	}

	_, err = tiers.Record("free", at(13, 0))
	require.ErrorContains(t, err, `tier "free" is not one of managed, byo`)
	_, err = tiers.Record(contract.TierManaged, at(10, 0))
	require.ErrorContains(t, err, "before the last one")
	require.Len(t, tiers.Changes, 3, "refused changes left nothing behind")

	tiers.Prune(at(12, 0))
	require.Equal(t, []TierChange{{contract.TierBYO, at(12, 0)}}, tiers.Changes)
	require.Equal(t, contract.TierBYO, tiers.ForHour(at(12, 0)))
}

func TestPoolHoursCoverTheHoursThePoolExisted(t *testing.T) {
	tiers := Tiers{Start: at(9, 15)}
	require.Zero(t, tiers.PoolHours(at(8, 0)))
	require.InDelta(t, 0.75, tiers.PoolHours(at(9, 0)), 1e-12)
	require.Equal(t, 1.0, tiers.PoolHours(at(10, 0)))
	tiers.End = at(11, 30)
	require.Equal(t, 0.5, tiers.PoolHours(at(11, 0)))
	require.Zero(t, tiers.PoolHours(at(12, 0)))
	require.Zero(t, Tiers{}.PoolHours(at(9, 0)), "a pool that never started bills nothing")
}

func TestBYOHourBillsThePoolHourNotItsNodes(t *testing.T) {
	tl := timelineOf(t, change{"s-2", 2, at(9, 0)}, change{"s-4", 1, at(10, 30)})
	tiers := Tiers{Start: at(9, 0), Changes: []TierChange{{contract.TierBYO, at(9, 0)}}}
	events := EventsForTieredHour(testPool, tl, tiers, at(10, 0))
	require.Equal(t, []Event{{
		MeterID: MeterPoolHours, UserID: "acme", Tier: contract.TierBYO, Project: "web",
		PoolID: "pool/acme/web/llm/digitalocean/sfo3", Provider: "digitalocean", Cluster: "sfo3",
		Value: 1, Hour: at(10, 0), Idempotency: "pool/acme/web/llm/digitalocean/sfo3/2025-03-01T10/management-plane",
		Dimensions: map[string]string{
			"service": "llm", "project": "web", "provider": "digitalocean", "cluster": "sfo3",
			"pool": "pool/acme/web/llm/digitalocean/sfo3", "tier": "byo", "nodeHours": "2.5",
		},
	}}, events)
	require.NoError(t, events[0].Validate())

	// The same hour under managed bills node-hours per size.
	managed := EventsForTieredHour(testPool, tl, Tiers{Start: at(9, 0)}, at(10, 0))
	require.Equal(t, EventsForHour(testPool, tl, at(10, 0)), managed)
	require.Len(t, managed, 2)
}
