package kvm

import (
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// host is the libvirt host as poolgroup sees it. A domain is a member by
// the pool, size and key in its <metadata>, which is part of its
// definition, so a crash between define and record never leaks; a domain
// whose metadata names the pool but no configured size (a size since
// removed, or a domain made by hand) is a leak.
type host struct{ *Provider }

var _ poolgroup.Host[domain] = host{}

func (p host) GroupSize(d domain, poolLabel string) (string, bool) {
	if d.meta == nil || d.meta.Pool != poolLabel {
		return "", false
	}
	_, ok := p.templates[d.meta.Size]
	return d.meta.Size, ok
}

func (host) Leaked(d domain, poolLabel string) bool { return d.meta != nil && d.meta.Pool == poolLabel }

func (host) KeyHash(d domain) string {
	if d.meta == nil {
		return ""
	}
	return d.meta.Key
}

func (host) MemberKeyHash(g poolgroup.Group, key connectors.IdempotencyKey, ordinal int) string {
	return keyHash(g, key, ordinal)
}
