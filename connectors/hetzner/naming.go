package hetzner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Server labels that make a set of servers a node group.
const (
	LabelPool = "visor-pool" // the pool's NodePoolLabel, as a Hetzner label value
	LabelSize = "visor-size" // the server type
	LabelKey  = "visor-key"  // hash of the idempotency key and ordinal that created it
)

// Hetzner label values: up to 63 of [a-zA-Z0-9-_.], alphanumeric at both ends.
var labelValueRE = regexp.MustCompile(`^([a-zA-Z0-9]([-_.a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)?$`)

// serverTypeRE is a server type that is also safe inside a host name.
var serverTypeRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?$`)

func hashHex(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])
}

// poolLabelValue is the pool's NodePoolLabel as a label value; one too long
// for a label keeps a readable prefix and gains a hash, still unique.
func poolLabelValue(nodePoolLabel string) string {
	if labelValueRE.MatchString(nodePoolLabel) {
		return nodePoolLabel
	}
	prefix := strings.TrimRight(nodePoolLabel[:min(len(nodePoolLabel), 50)], "-_.")
	return prefix + "-" + hashHex(nodePoolLabel)[:12]
}

// group is one node group: the pool's servers of one server type.
type group struct {
	nodePoolLabel string
	size          string
}

// GroupID is "<NodePoolLabel>/<server type>".
func GroupID(nodePoolLabel, serverType string) string { return nodePoolLabel + "/" + serverType }

func parseGroupID(id string) (group, error) {
	i := strings.LastIndex(id, "/")
	if i <= 0 {
		return group{}, fmt.Errorf("group ID %q must be <pool label>/<server type>", id)
	}
	g := group{nodePoolLabel: id[:i], size: id[i+1:]}
	if !serverTypeRE.MatchString(g.size) {
		return group{}, fmt.Errorf("group ID %q: server type %q must be lower-case letters, digits and '-'", id, g.size)
	}
	return g, nil
}

func (g group) id() string { return GroupID(g.nodePoolLabel, g.size) }

// selector picks the group's servers.
func (g group) selector() map[string]string {
	return map[string]string{LabelPool: poolLabelValue(g.nodePoolLabel), LabelSize: g.size}
}

// member is the ordinal-th server a call with key creates in the group.
type member struct {
	name     string // deterministic: <pool hash>-<server type>-<key hash>
	keyLabel string // value of LabelKey
}

func (g group) member(key connectors.IdempotencyKey, ordinal int) member {
	h := hashHex(string(key), strconv.Itoa(ordinal))
	return member{
		name:     hashHex(g.nodePoolLabel)[:8] + "-" + g.size + "-" + h[:10],
		keyLabel: h[:32],
	}
}
