package metering

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

var testPool = types.PoolKey{Org: "acme", Project: "web", Service: "llm", Provider: "digitalocean", Cluster: "sfo3"}

func TestEventsForHour(t *testing.T) {
	tl := timelineOf(t,
		change{"s-4vcpu-8gb", 2, at(9, 0)},
		change{"g-8vcpu-32gb", 1, at(10, 30)},
	)
	events := EventsForHour(testPool, tl, at(10, 0))
	require.Equal(t, []Event{
		{
			MeterID: "visor.node-hours", UserID: "acme", Value: 0.5, Hour: at(10, 0), Tier: "managed",
			Project: "web", PoolID: "pool/acme/web/llm/digitalocean/sfo3", Provider: "digitalocean", Cluster: "sfo3", Size: "g-8vcpu-32gb",
			Idempotency: "pool/acme/web/llm/digitalocean/sfo3/g-8vcpu-32gb/2025-03-01T10",
			Dimensions: map[string]string{
				"service": "llm", "project": "web", "provider": "digitalocean", "cluster": "sfo3",
				"size": "g-8vcpu-32gb", "pool": "pool/acme/web/llm/digitalocean/sfo3", "tier": "managed",
			},
		},
		{
			MeterID: "visor.node-hours", UserID: "acme", Value: 2, Hour: at(10, 0), Tier: "managed",
			Project: "web", PoolID: "pool/acme/web/llm/digitalocean/sfo3", Provider: "digitalocean", Cluster: "sfo3", Size: "s-4vcpu-8gb",
			Idempotency: "pool/acme/web/llm/digitalocean/sfo3/s-4vcpu-8gb/2025-03-01T10",
			Dimensions: map[string]string{
				"service": "llm", "project": "web", "provider": "digitalocean", "cluster": "sfo3",
				"size": "s-4vcpu-8gb", "pool": "pool/acme/web/llm/digitalocean/sfo3", "tier": "managed",
			},
		},
	}, events)
	for _, e := range events {
		require.NoError(t, e.Validate())
	}
	require.Empty(t, EventsForHour(testPool, tl, at(8, 0)), "no nodes, no events")
	// The same hour asked at another minute gives the same keys.
	require.Equal(t, events, EventsForHour(testPool, tl, at(10, 42)))
}

func TestEventValidate(t *testing.T) {
	good := EventsForHour(testPool, timelineOf(t, change{"a", 1, at(9, 0)}), at(10, 0))[0]
	bad := func(edit func(*Event)) error { e := good; edit(&e); return e.Validate() }
	require.ErrorContains(t, bad(func(e *Event) { e.Idempotency = "" }), "no idempotency key")
	require.ErrorContains(t, bad(func(e *Event) { e.UserID = "" }), "no user")
	require.ErrorContains(t, bad(func(e *Event) { e.MeterID = "" }), "no meter ID")
	require.ErrorContains(t, bad(func(e *Event) { e.Hour = at(10, 5) }), "not the start of a UTC hour")
	require.ErrorContains(t, bad(func(e *Event) { e.Value = -1 }), "not a finite non-negative")

	dup := good
	dup.Value = 7
	_, err := CheckEvents([]Event{good, dup})
	require.ErrorContains(t, err, "appears twice")
	_, err = CheckEvents([]Event{good, good})
	require.NoError(t, err)
	require.ErrorContains(t, bad(func(e *Event) { e.Size = "" }), "has no size")
	require.ErrorContains(t, bad(func(e *Event) { e.Tier = "free" }), `tier "free"`)
	require.ErrorContains(t, bad(func(e *Event) { e.MeterID = "visor.cpu" }), `meterId "visor.cpu"`)
	require.ErrorContains(t, bad(func(e *Event) { e.PoolID = "" }), "no poolId")

	// An event from a worker before the top-level fields still says
	// what it bills: they are filled from its dimensions.
	old := Event{MeterID: MeterNodeHours, UserID: "acme", Value: 1, Hour: at(10, 0), Idempotency: "k",
		Dimensions: map[string]string{DimPool: "pool/x", DimSize: "s", DimProject: "web", DimCluster: "sfo3", DimProvider: "do"}}
	filled, err := CheckEvents([]Event{old})
	require.NoError(t, err)
	require.Equal(t, Event{MeterID: MeterNodeHours, UserID: "acme", Tier: contract.TierManaged, Project: "web", PoolID: "pool/x",
		Provider: "do", Cluster: "sfo3", Size: "s", Value: 1, Hour: at(10, 0), Idempotency: "k", Dimensions: old.Dimensions}, filled[0])
}
