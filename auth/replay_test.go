package auth

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
)

func TestReplayGuard(t *testing.T) {
	f := newFixture(t)
	body := scaleBody(t, 4)
	a, err := Sign(f.acme, poolID, msg, body, t0)
	require.NoError(t, err)
	var g ReplayGuard
	require.False(t, g.Has(f.trust, a, t0))
	require.NoError(t, g.Check(f.trust, a, t0))
	require.True(t, g.Has(f.trust, a, t0))
	require.ErrorContains(t, g.Check(f.trust, a, t0.Add(time.Minute)), "already used")

	// It survives Continue-As-New as JSON.
	b, err := json.Marshal(g)
	require.NoError(t, err)
	var carried ReplayGuard
	require.NoError(t, json.Unmarshal(b, &carried))
	require.ErrorContains(t, carried.Check(f.trust, a, t0.Add(time.Minute)), "already used")

	// Once Verify would refuse the envelope for its age, the nonce goes.
	later := t0.Add(2*DefaultMaxSkew + time.Second)
	carried.Forget(f.trust, later)
	require.Empty(t, carried.Seen)
}

func TestReplayGuardIsBounded(t *testing.T) {
	f := newFixture(t)
	g := ReplayGuard{Max: 3}
	for i := range 3 {
		require.NoError(t, g.Check(f.trust, contract.Authorization{Nonce: fmt.Sprintf("nonce-%02d-AAAAAAAAAAAA", i), At: t0}, t0))
	}
	require.ErrorContains(t, g.Check(f.trust, contract.Authorization{Nonce: "nonce-99-AAAAAAAAAAAA", At: t0}, t0), "more than 3 signed requests")
	require.Len(t, g.Seen, 3)
	require.NoError(t, g.Check(f.trust, contract.Authorization{Nonce: "nonce-99-AAAAAAAAAAAA", At: t0.Add(5 * time.Minute)}, t0.Add(5*time.Minute)), "room again once old ones expire")
	require.Len(t, g.Seen, 1)
}
