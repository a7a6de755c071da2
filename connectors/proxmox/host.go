package proxmox

import (
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// host is the Proxmox cluster as poolgroup sees it. A VM is a member by
// its pool and size tags, and is known as key's by its name, which a clone
// has before it is tagged. The pool's leaks are VMs tagged for it whose
// size tag is missing or not a configured size, and VMs carrying its clone
// names but no tags at all (a clone whose worker died before it tagged it,
// and whose decision was never retried).
type host struct{ *Provider }

var _ poolgroup.Host[vm] = host{}

func (p host) GroupSize(v vm, poolLabel string) (string, bool) {
	if !slices.Contains(v.tags, tagPool+poolLabel) {
		return "", false
	}
	return p.groupSize(v)
}

func (host) Leaked(v vm, poolLabel string) bool {
	_, tagged := tagValue(v.tags, tagPool)
	return slices.Contains(v.tags, tagPool+poolLabel) || !tagged && strings.HasPrefix(v.name, poolgroup.NamePrefix(poolLabel))
}

func (host) KeyHash(v vm) string { return v.name }

func (host) MemberKeyHash(g poolgroup.Group, key connectors.IdempotencyKey, ordinal int) string {
	return newMember(g, key, ordinal).name
}
