package types

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Node lifecycle (docs/capacity-policies.md, "Drift and expiry"): a node
// lives at most ExpireAfter, and a node launched under a node template
// the policy no longer has (drift) is replaced, both within the
// disruption budget.

// DefaultExpireAfter is what a written policy gets for expireAfter:
// Karpenter's 720h, so every node is replaced within a month and patches
// reach it. A policy recorded before expiry existed has zero: off.
const DefaultExpireAfter = 720 * time.Hour

// MaxExpireAfter bounds expireAfter: beyond a year it is a typo, not a
// lifetime.
const MaxExpireAfter = 365 * 24 * time.Hour

// TemplateHash is the hash of what the provider puts on a node group's
// nodes when it creates the group: the policy's node labels and taints,
// in a canonical order. A group created under another hash launches
// nodes of an older template: they are drifted. Allowed sizes, capacity
// types and zones are not in it: a node drifts on those only when its
// own size, capacity type or zone is no longer allowed (as Karpenter
// checks requirements node by node), so allowing one more size does not
// replace the whole pool.
func (p Policy) TemplateHash() string {
	var b strings.Builder
	keys := make([]string, 0, len(p.NodeLabels))
	for k := range p.NodeLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("labels")
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", k, p.NodeLabels[k])
	}
	taints := make([]string, 0, len(p.NodeTaints))
	for _, t := range p.NodeTaints {
		taints = append(taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	sort.Strings(taints)
	b.WriteString("\x01taints")
	for _, t := range taints {
		b.WriteString("\x00" + t)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:6])
}

// SizeAllowed reports whether the policy lets the pool run nodes of size
// (an empty allowedSizes allows every size).
func (p Policy) SizeAllowed(size string) bool {
	if len(p.AllowedSizes) == 0 {
		return true
	}
	for _, s := range p.AllowedSizes {
		if s == size {
			return true
		}
	}
	return false
}

// CapacityTypeAllowed reports whether the policy buys capacity type ct
// (an empty capacityTypes is on demand only).
func (p Policy) CapacityTypeAllowed(ct CapacityType) bool {
	if len(p.CapacityTypes) == 0 {
		return ct.Or() == CapacityOnDemand
	}
	for _, c := range p.CapacityTypes {
		if c.Or() == ct.Or() {
			return true
		}
	}
	return false
}

// ZoneAllowed reports whether the policy buys in zone (an empty zones,
// or a group not pinned to a zone, is always allowed).
func (p Policy) ZoneAllowed(zone string) bool {
	if len(p.Zones) == 0 || zone == "" {
		return true
	}
	for _, z := range p.Zones {
		if z == zone {
			return true
		}
	}
	return false
}

// validateLifecycle checks expireAfter and terminationGracePeriod.
func (p Policy) validateLifecycle() []error {
	var errs []error
	if d := p.ExpireAfter.D(); d < 0 || d > MaxExpireAfter {
		errs = append(errs, fmt.Errorf("policy.expireAfter: must be within [0, %s] (0: nodes never expire), got %s", MaxExpireAfter, d))
	}
	if d := p.TerminationGracePeriod.D(); d < 0 || d > MaxPolicyDuration {
		errs = append(errs, fmt.Errorf("policy.terminationGracePeriod: must be within [0, %s] (0: a blocked drain waits without bound), got %s", MaxPolicyDuration, d))
	}
	return errs
}
