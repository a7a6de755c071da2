package proxmox

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Tags that make a set of VMs a node group. Proxmox tags are lower-case
// [a-z0-9_][a-z0-9_+.-]*, so each carries its value after a dot.
const (
	tagPool = "visor-pool." // + the pool's NodePoolLabel (org.project.service.provider)
	tagSize = "visor-size." // + the size
	tagKey  = "visor-key."  // + hash of the idempotency key and ordinal that made it
)

// sizeRE: a size goes into tags and VM (host, node) names.
var sizeRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// nodeNameRE is a Proxmox cluster node name (a host name).
var nodeNameRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

func validSize(size string) error {
	if !sizeRE.MatchString(size) {
		return fmt.Errorf("size %q must be 1-32 lower-case letters, digits and '-' (it goes into tags and VM names)", size)
	}
	return nil
}

func validNodeName(n string) error {
	if !nodeNameRE.MatchString(n) {
		return fmt.Errorf("%q is not a Proxmox node name", n)
	}
	return nil
}

var hashHex = connectors.NameHash

// GroupID is "<NodePoolLabel>/<size>".
func GroupID(nodePoolLabel, size string) string { return connectors.PoolGroupID(nodePoolLabel, size) }

// group is one node group: the pool's VMs of one size.
type group struct {
	poolLabel string
	size      string
}

func parseGroupID(id string) (group, error) {
	label, size, err := connectors.ParsePoolGroupID(id)
	if err != nil {
		return group{}, err
	}
	if err := validSize(size); err != nil {
		return group{}, fmt.Errorf("group ID %q: %w", id, err)
	}
	return group{poolLabel: label, size: size}, nil
}

func (g group) id() string { return GroupID(g.poolLabel, g.size) }

// namePrefix starts the name of every VM the pool's groups clone: a hash
// of the pool label, so a VM cloned but not yet tagged is still known to
// be the pool's (LeakedInstances).
func namePrefix(poolLabel string) string { return "v" + hashHex(poolLabel)[:8] + "-" }

// member is the ordinal-th VM a call with key clones into the group.
type member struct {
	name   string // <namePrefix><size>-<10 hex of key and ordinal>: a DNS label, the node name
	keyTag string
}

func (g group) member(key connectors.IdempotencyKey, ordinal int) member {
	h := hashHex(string(key), strconv.Itoa(ordinal))
	return member{name: namePrefix(g.poolLabel) + g.size + "-" + h[:10], keyTag: tagKey + h[:20]}
}

// tags are what a member of the group carries, in Proxmox's ';' form.
func (g group) tags(m member) string {
	return strings.Join([]string{tagPool + g.poolLabel, tagSize + g.size, m.keyTag}, ";")
}

// parseTags splits Proxmox's tag list (';', ',' or ' ' separated).
func parseTags(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
}

// tagValue is the value of the first tag with prefix, if any.
func tagValue(tags []string, prefix string) (string, bool) {
	for _, t := range tags {
		if v, ok := strings.CutPrefix(t, prefix); ok {
			return v, true
		}
	}
	return "", false
}
