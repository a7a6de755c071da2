package lightsail

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// The tagged-group tags (connectors.TagGroupPool and friends), under this
// provider's names for its fakes and tests.
const (
	TagPool = connectors.TagGroupPool
	TagSize = connectors.TagGroupSize
	TagKey  = connectors.TagGroupKey
)

// bundleRE is a Lightsail bundle ID: medium_3_0, 2xlarge_3_0.
var bundleRE = regexp.MustCompile(`^[a-z0-9]+(_[0-9]+)+$`)

// GroupID is "<NodePoolLabel>/<bundle ID>".
func GroupID(nodePoolLabel, bundle string) string {
	return connectors.PoolGroupID(nodePoolLabel, bundle)
}

type group struct{ poolLabel, bundle string }

func parseGroupID(id string) (group, error) {
	label, bundle, err := connectors.ParsePoolGroupID(id)
	if err != nil {
		return group{}, err
	}
	if !bundleRE.MatchString(bundle) {
		return group{}, fmt.Errorf("group ID %q: %q is not a Lightsail bundle ID such as medium_3_0", id, bundle)
	}
	return group{poolLabel: label, bundle: bundle}, nil
}

func (g group) id() string { return GroupID(g.poolLabel, g.bundle) }

// InstanceName is the i-th (from 1) instance a decision with key makes in
// the group, and the Kubernetes node name: a DNS label, unique in the
// region, the same every time the decision is retried, so a retry asks
// for the names it already made and Lightsail holds no second set.
func (g group) InstanceName(key connectors.IdempotencyKey, i int) string {
	bundle := strings.ReplaceAll(g.bundle, "_", "-")
	return fmt.Sprintf("v%s-%s-%s-%d", connectors.NameHash(g.poolLabel)[:8], bundle, connectors.NameHash(string(key))[:6], i)
}

// nodeNamePlaceholder in the cluster-join user data is replaced by each
// instance's name, so the join script can register the node under it.
const nodeNamePlaceholder = "{{nodeName}}"
