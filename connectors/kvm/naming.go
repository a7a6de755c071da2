package kvm

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"

	"github.com/hanzoai/visor-fleet/connectors"
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

// sizeRE: a size goes into domain (host, node) names.
var sizeRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

func validSize(size string) error {
	if !sizeRE.MatchString(size) {
		return fmt.Errorf("size %q must be 1-32 lower-case letters, digits and '-' (it goes into domain names)", size)
	}
	return nil
}

var hashHex = connectors.NameHash

// GroupID is "<NodePoolLabel>/<size>".
func GroupID(nodePoolLabel, size string) string { return connectors.PoolGroupID(nodePoolLabel, size) }

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

// member is the ordinal-th domain a call with key defines in the group.
type member struct {
	name string // v<pool hash>-<size>-<10 hex>: a DNS label, the node name
	uuid string // from the same hash: a redefinition is the same domain
	meta nodeMeta
}

func (g group) member(key connectors.IdempotencyKey, ordinal int) member {
	h := hashHex(string(key), strconv.Itoa(ordinal), g.id())
	return member{
		name: "v" + hashHex(g.poolLabel)[:8] + "-" + g.size + "-" + h[:10],
		uuid: h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32],
		meta: nodeMeta{Pool: g.poolLabel, Size: g.size, Key: h[:32]},
	}
}
