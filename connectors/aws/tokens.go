package aws

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// maxTokenLen is EC2's ClientToken limit (64 ASCII characters).
const maxTokenLen = 64

// ClientToken is the idempotency token sent with a mutating call: EC2
// ClientToken, EKS ClientRequestToken. It is a pure function of the
// decision's key, the object acted on (scope) and the ordinal of the thing
// created, so a retried activity sends byte-identical tokens. 54 ASCII
// characters: "visor-" and 48 hex digits of SHA-256.
func ClientToken(key connectors.IdempotencyKey, scope string, ordinal int) string {
	h := sha256.New()
	// NUL separators keep ("ab","c") and ("a","bc") apart.
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(ordinal)))
	return "visor-" + hex.EncodeToString(h.Sum(nil))[:48]
}

// maxGroupNameLen fits EKS node group names, the strictest of the three.
const maxGroupNameLen = 63

// GroupName is the name a group created for spec under key gets: a
// readable base (spec.Name, or pool label and size) and a hash of the key,
// so a repeated create with the same key lands on the same name while two
// different decisions never collide. Only [A-Za-z0-9-], at most 63 chars.
func GroupName(spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) string {
	base := spec.Name
	if base == "" {
		base = spec.Pool.NodePoolLabel() + "-" + spec.Size
	}
	sum := sha256.Sum256([]byte(key))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	base = strings.Trim(sanitizeName(base), "-")
	if len(base) > maxGroupNameLen-len(suffix) {
		base = strings.TrimRight(base[:maxGroupNameLen-len(suffix)], "-")
	}
	if base == "" {
		base = "visor"
	}
	return base + suffix
}

// sanitizeName keeps letters, digits and '-'; anything else becomes '-'.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, s)
}
