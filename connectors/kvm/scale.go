package kvm

import (
	"context"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// groups is the node-group logic over the host's domains. A domain is a
// member by the pool, size and key in its <metadata>, which is part of its
// definition, so a crash between define and record never leaks; a domain
// whose metadata names the pool but no configured size (a size since
// removed, or a domain made by hand) is a leak.
func (p *Provider) groups() poolgroup.Groups[domain] {
	sizes := make([]string, 0, len(p.cfg.Templates))
	for _, t := range p.cfg.Templates {
		sizes = append(sizes, t.Name)
	}
	return poolgroup.Groups[domain]{
		Provider: ProviderName,
		Sizes:    sizes,
		List:     p.listDomains,
		GroupSize: func(d domain, poolLabel string) (string, bool) {
			if d.meta == nil || d.meta.Pool != poolLabel {
				return "", false
			}
			_, ok := p.templates[d.meta.Size]
			return d.meta.Size, ok
		},
		Leaked: func(d domain, poolLabel string) bool { return d.meta != nil && d.meta.Pool == poolLabel },
		KeyHash: func(d domain) string {
			if d.meta == nil {
				return ""
			}
			return d.meta.Key
		},
		MemberKeyHash: keyHash,
		Ensure: func(ctx context.Context, op string, g poolgroup.Group, key connectors.IdempotencyKey, ordinal int, all []domain) error {
			return p.ensureMember(ctx, op, g, newMember(g, key, ordinal), all)
		},
		Destroy: func(_ context.Context, op string, doms []domain) error { return p.destroyAll(op, doms) },
	}
}
