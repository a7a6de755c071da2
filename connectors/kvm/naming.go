package kvm

import (
	"encoding/xml"
	"fmt"
	"strconv"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// metadataNS is the namespace of Visor's element in a domain's <metadata>.
const (
	metadataNS     = "https://hanzo.ai/visor-fleet/kvm/1"
	metadataPrefix = "visor"
)

// nodeMeta is Visor's <metadata> element: what makes a domain a member.
type nodeMeta struct {
	XMLName xml.Name `xml:"node"`
	Pool    string   `xml:"pool"`
	Size    string   `xml:"size"`
	Key     string   `xml:"key"`     // hash of the idempotency key and ordinal
	Created string   `xml:"created"` // RFC 3339, when it was defined
}

func (m nodeMeta) xml() string {
	return fmt.Sprintf(`<%s:node xmlns:%s=%q><pool>%s</pool><size>%s</size><key>%s</key><created>%s</created></%s:node>`,
		metadataPrefix, metadataPrefix, metadataNS, m.Pool, m.Size, m.Key, m.Created, metadataPrefix)
}

// GroupID is "<NodePoolLabel>/<size>".
func GroupID(nodePoolLabel, size string) string { return connectors.PoolGroupID(nodePoolLabel, size) }

// member is the ordinal-th domain a call with key defines in the group.
type member struct {
	name string // poolgroup.Group.MachineName: a DNS label, the node name
	uuid string // from the same hash: a redefinition is the same domain
	meta nodeMeta
}

// keyHash hashes the group ID in too: the UUID comes from it, and must
// differ between groups that one key scales.
func keyHash(g poolgroup.Group, key connectors.IdempotencyKey, ordinal int) string {
	return connectors.NameHash(string(key), strconv.Itoa(ordinal), g.ID())[:32]
}

func newMember(g poolgroup.Group, key connectors.IdempotencyKey, ordinal int) member {
	h := keyHash(g, key, ordinal)
	return member{
		name: g.MachineName(h),
		uuid: h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32],
		meta: nodeMeta{Pool: g.PoolLabel, Size: g.Size, Key: h},
	}
}
