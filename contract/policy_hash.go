package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/hanzoai/visor-fleet/types"
)

// MemoPolicyHash is the pool memo key holding PolicyHash of the policy the
// pool runs. The pool workflow writes it (at start and on every accepted
// set-policy); `pool apply` compares it with the file's policy to skip an
// unchanged pool without querying it. Only the workflow may write it: a
// memo set by a client would go stale on the next set-policy.
const MemoPolicyHash = "policyHash"

// PolicyHash names a policy by its content: equal policies, equal hashes.
// Deterministic (JSON of a struct has a fixed field order), so workflow
// code may call it.
func PolicyHash(p types.Policy) string {
	raw, err := json.Marshal(p)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}
