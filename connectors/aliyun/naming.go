package aliyun

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

// instanceTypeRE: ecs.<family>.<size>.
var instanceTypeRE = regexp.MustCompile(`^ecs\.[a-z0-9-]+\.[a-z0-9-]+$`)

var hashHex = connectors.NameHash

// GroupID is "<NodePoolLabel>/<instance type>".
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
	if !instanceTypeRE.MatchString(size) {
		return group{}, fmt.Errorf("group ID %q: %q is not an ECS instance type such as ecs.g7.large", id, size)
	}
	return group{poolLabel: label, size: size}, nil
}

func (g group) id() string { return GroupID(g.poolLabel, g.size) }

// clientToken is the RunInstances ClientToken (at most 64 ASCII
// characters) for key asking the group for amount instances: the same
// decision retried sends the same token and parameters, and ECS answers
// with the instances it already made.
func (g group) clientToken(key connectors.IdempotencyKey, amount int) string {
	return "visor-" + hashHex(string(key), g.id(), fmt.Sprint(amount))[:40]
}

// hostName is the host (and Kubernetes node) name prefix of the
// instances a call with key creates; ECS appends a unique three-digit
// suffix to each (UniqueSuffix).
func (g group) hostName(key connectors.IdempotencyKey) string {
	size := strings.NewReplacer(".", "-").Replace(strings.TrimPrefix(g.size, "ecs."))
	return "v" + hashHex(g.poolLabel)[:8] + "-" + size + "-" + hashHex(string(key))[:6]
}
