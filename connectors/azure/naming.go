package azure

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// Tags this connector writes. Azure tag names may not hold "/", so the
// pool label's key is spelled with a dash.
const (
	TagPool = "hanzo.ai-pool"
	TagSize = "hanzo.ai-size"
	// TagKey is a hash of the idempotency key of the create that made the
	// scale set, for whoever traces a scale set back to its decision.
	TagKey = "hanzo.ai-key"
)

// ScaleSetName is the pool's scale set of that size: a hash of the pool
// label (which may be longer than Azure allows) and the size, lower case,
// within the 64 characters a scale set name may have.
func ScaleSetName(poolLabel, size string) string {
	sum := sha256.Sum256([]byte(poolLabel))
	s := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(size, "Standard_"), "_", "-"))
	name := "visor-" + hex.EncodeToString(sum[:5]) + "-" + s
	return name[:min(len(name), 64)]
}

// computerNamePrefix is what Azure puts before each VM's six-character
// suffix: the Kubernetes node name. Linux allows 58 characters in all.
func computerNamePrefix(setName string) string {
	return setName[:min(len(setName), 50)]
}

// labelTag is a node label as a tag name: Azure refuses "/" in tag names
// and Kubernetes refuses ":" in label keys, so the prefix's "/" is written
// ":" and read back.
func labelTag(label string) string { return strings.Replace(label, "/", ":", 1) }

func tagLabel(tag string) string { return strings.Replace(tag, ":", "/", 1) }

// reservedTag reports a tag name the connector writes itself.
func reservedTag(name string) bool { return strings.HasPrefix(name, "hanzo.ai-") }

func keyTag(key connectors.IdempotencyKey) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:12])
}

// ours reports whether a scale set's tags name the pool.
func ours(tags map[string]*string, pool types.PoolKey) bool {
	v := tags[TagPool]
	return v != nil && *v == pool.NodePoolLabel()
}
