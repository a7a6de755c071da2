package connectors

import (
	"strings"
)

// For providers without node groups of their own, whose group is the
// pool's machines of one size found by their tags (a PoolGroupID): Aliyun
// ECS, Lightsail.

// The tags that make a set of machines a tagged group, set in the create
// call itself so no machine ever exists untagged.
const (
	TagGroupPool = "visor-pool" // the pool's NodePoolLabel
	TagGroupSize = "visor-size" // the size (instance type, bundle)
	TagGroupKey  = "visor-key"  // KeyTag of the idempotency key that created it
)

// KeyTag is the TagGroupKey value of the machines a call with key creates.
func KeyTag(key IdempotencyKey) string { return NameHash(string(key))[:32] }

// PlanTarget is how a tagged group of live machines (oldest first) reaches
// target: remove, the newest beyond it; or create, how many machines the
// decision whose machines madeByKey reports must own in all (the machines
// it already made count, so a retry asks for the same ones again).
func PlanTarget[M any](live []M, target int, madeByKey func(M) bool) (remove []M, create int) {
	if len(live) > target {
		for i := len(live) - 1; i >= target; i-- {
			remove = append(remove, live[i])
		}
		return remove, 0
	}
	if len(live) == target {
		return nil, 0
	}
	others := 0
	for _, m := range live {
		if !madeByKey(m) {
			others++
		}
	}
	return nil, target - others
}

// TenantTags are a machine's tags other than those starting with the
// provider's reserved prefix.
func TenantTags(tags map[string]string, reserved string) map[string]string {
	out := map[string]string{}
	for k, v := range tags {
		if !strings.HasPrefix(k, reserved) {
			out[k] = v
		}
	}
	return out
}
