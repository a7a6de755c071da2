package sim

import (
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
)

// keyRetention is how long an applied key is remembered, as a real
// provider's client token expires; a retry never comes this late.
const keyRetention = 7 * 24 * time.Hour

// appliedKey records a mutating call that took effect, persisted with the
// fleet so a retry after a crash is recognised too.
type appliedKey struct {
	Op string `json:"op"`
	// Request fingerprints the call, so reusing a key for a different
	// request is refused instead of silently ignored.
	Request string    `json:"request"`
	GroupID string    `json:"groupID"`
	At      time.Time `json:"at"`
}

func keyID(op string, key connectors.IdempotencyKey) string { return op + "/" + string(key) }

// applied reports whether (op, key) already took effect. Called with f.mu held.
func (f *Fleet) applied(op string, key connectors.IdempotencyKey, request string) (appliedKey, bool, error) {
	k, ok := f.st.Keys[keyID(op, key)]
	if !ok {
		return appliedKey{}, false, nil
	}
	if k.Request != request {
		return k, true, f.permanent(op, fmt.Errorf("idempotency key %q was already used for a different request (%s)", key, k.Request))
	}
	return k, true, nil
}

func (f *Fleet) recordKey(op string, key connectors.IdempotencyKey, request, groupID string, now time.Time) {
	f.st.Keys[keyID(op, key)] = appliedKey{Op: op, Request: request, GroupID: groupID, At: now}
	f.touch()
}

func (f *Fleet) pruneKeys(now time.Time) {
	for id, k := range f.st.Keys {
		if now.Sub(k.At) > keyRetention {
			delete(f.st.Keys, id)
			f.touch()
		}
	}
}
