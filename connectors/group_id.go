package connectors

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// PoolGroupID is the group ID of a provider without node groups of its own
// (a group is the pool's machines of one size): "<pool label>/<size>".
func PoolGroupID(poolLabel, size string) string { return poolLabel + "/" + size }

// ParsePoolGroupID splits a PoolGroupID and checks its pool label; the
// size's form is the provider's to check.
func ParsePoolGroupID(id string) (poolLabel, size string, err error) {
	poolLabel, size, ok := strings.Cut(id, "/")
	if !ok || size == "" {
		return "", "", fmt.Errorf("group ID %q must be <pool label>/<size>", id)
	}
	if err := types.ValidateNodePoolLabel(poolLabel); err != nil {
		return "", "", fmt.Errorf("group ID %q: %w", id, err)
	}
	return poolLabel, size, nil
}

// NameHash is the hex SHA-256 of parts (joined by NUL), for the
// deterministic machine names and tags derived from an idempotency key.
func NameHash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}
