package auth

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
)

// DefaultMaxNonces bounds a ReplayGuard: at most this many signed requests
// per pool within two skews (4 minutes by default).
const DefaultMaxNonces = 1024

// ReplayGuard remembers the nonces of accepted requests for as long as
// their time could still pass Verify, so a captured envelope is refused the
// second time. It is plain data (JSON), small and bounded, meant to live in
// workflow state and be carried into Continue-As-New; it uses no clock but
// the now it is given.
type ReplayGuard struct {
	// Seen maps a nonce to its envelope's At.
	Seen map[string]time.Time `json:"seen,omitempty"`
	// Max bounds Seen; zero means DefaultMaxNonces.
	Max int `json:"max,omitempty"`
}

// Check refuses a nonce already seen; otherwise it records it. Entries
// whose At is more than twice the skew before now are forgotten first
// (Verify refuses those envelopes anyway). Call it after Verify succeeded,
// and only for a request that is accepted.
func (g *ReplayGuard) Check(trust Trust, a contract.Authorization, now time.Time) error {
	g.Forget(trust, now)
	if at, ok := g.Seen[a.Nonce]; ok {
		return fmt.Errorf("authorization nonce was already used (request signed at %s): a replay", at.UTC().Format(time.RFC3339))
	}
	limit := g.Max
	if limit <= 0 {
		limit = DefaultMaxNonces
	}
	if len(g.Seen) >= limit {
		return fmt.Errorf("more than %d signed requests within %s: refused until older ones expire", limit, 2*trust.skew())
	}
	if g.Seen == nil {
		g.Seen = map[string]time.Time{}
	}
	g.Seen[a.Nonce] = a.At
	return nil
}

// Has reports whether the nonce was already accepted (for a validator that
// must not change state).
func (g *ReplayGuard) Has(trust Trust, a contract.Authorization, now time.Time) bool {
	at, ok := g.Seen[a.Nonce]
	return ok && now.Sub(at) <= 2*trust.skew()
}

// Forget drops the nonces that can no longer pass Verify's time check.
func (g *ReplayGuard) Forget(trust Trust, now time.Time) {
	horizon := now.Add(-2 * trust.skew())
	for n, at := range g.Seen {
		if at.Before(horizon) {
			delete(g.Seen, n)
		}
	}
}
