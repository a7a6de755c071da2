package proxmox

import (
	"context"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// groups is the node-group logic over the cluster's VMs. A VM is a member
// by its pool and size tags, and is known as key's by its name, which a
// clone has before it is tagged. The pool's leaks are VMs tagged for it
// whose size tag is missing or not a configured size, and VMs carrying
// its clone names but no tags at all (a clone whose worker died before it
// tagged it, and whose decision was never retried).
func (p *Provider) groups() poolgroup.Groups[vm] {
	sizes := make([]string, 0, len(p.cfg.Templates))
	for _, t := range p.cfg.Templates {
		sizes = append(sizes, t.Name)
	}
	return poolgroup.Groups[vm]{
		Provider: ProviderName,
		Sizes:    sizes,
		List:     p.listVMs,
		GroupSize: func(v vm, poolLabel string) (string, bool) {
			if !slices.Contains(v.tags, tagPool+poolLabel) {
				return "", false
			}
			return p.groupSize(v)
		},
		Leaked: func(v vm, poolLabel string) bool {
			_, tagged := tagValue(v.tags, tagPool)
			return slices.Contains(v.tags, tagPool+poolLabel) || !tagged && strings.HasPrefix(v.name, poolgroup.NamePrefix(poolLabel))
		},
		KeyHash: func(v vm) string { return v.name },
		MemberKeyHash: func(g poolgroup.Group, key connectors.IdempotencyKey, ordinal int) string {
			return newMember(g, key, ordinal).name
		},
		Ensure: func(ctx context.Context, op string, g poolgroup.Group, key connectors.IdempotencyKey, ordinal int, all []vm) error {
			return p.ensureMember(ctx, op, g, newMember(g, key, ordinal), all)
		},
		Destroy: p.destroyAll,
	}
}
