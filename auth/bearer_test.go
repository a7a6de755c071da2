package auth

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBearerHeadersRefresh(t *testing.T) {
	f := newFixture(t)
	trust, cred := f.trust, f.acme
	now := t0
	b := NewBearerHeaders(cred)
	b.now = func() time.Time { return now }
	h1, err := b.GetHeaders(context.Background())
	require.NoError(t, err)
	caller, err := VerifyBearer(trust, h1["authorization"], now)
	require.NoError(t, err)
	require.Equal(t, "alice@acme", caller.Subject)

	now = now.Add(time.Minute)
	h2, err := b.GetHeaders(context.Background())
	require.NoError(t, err)
	require.Equal(t, h1, h2, "cached while it has more than a minute left")

	now = now.Add(MaxBearerTTL - time.Minute)
	h3, err := b.GetHeaders(context.Background())
	require.NoError(t, err)
	require.NotEqual(t, h1, h3, "replaced before it expires")
	_, err = VerifyBearer(trust, h3["authorization"], now)
	require.NoError(t, err)
}
