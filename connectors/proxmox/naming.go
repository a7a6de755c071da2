package proxmox

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// Tags that make a set of VMs a node group. Proxmox tags are lower-case
// [a-z0-9_][a-z0-9_+.-]*, so each carries its value after a dot.
const (
	tagPool = "visor-pool." // + the pool's NodePoolLabel (org.project.service.provider)
	tagSize = "visor-size." // + the size
	tagKey  = "visor-key."  // + hash of the idempotency key and ordinal that made it
)

// nodeNameRE is a Proxmox cluster node name (a host name).
var nodeNameRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

func validNodeName(n string) error {
	if !nodeNameRE.MatchString(n) {
		return fmt.Errorf("%q is not a Proxmox node name", n)
	}
	return nil
}

// GroupID is "<NodePoolLabel>/<size>".
func GroupID(nodePoolLabel, size string) string { return connectors.PoolGroupID(nodePoolLabel, size) }

// member is the ordinal-th VM a call with key clones into the group.
type member struct {
	name   string // poolgroup.Group.MachineName: a DNS label, the node name
	keyTag string
}

func newMember(g poolgroup.Group, key connectors.IdempotencyKey, ordinal int) member {
	h := connectors.NameHash(string(key), strconv.Itoa(ordinal))
	return member{name: g.MachineName(h), keyTag: tagKey + h[:20]}
}

// memberTags are what a member of the group carries, in Proxmox's ';' form.
func memberTags(g poolgroup.Group, m member) string {
	return strings.Join([]string{tagPool + g.PoolLabel, tagSize + g.Size, m.keyTag}, ";")
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
