package kubernetes

import (
	"fmt"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// parsePoolLabel reads a node's hanzo.ai/pool value, which is
// PoolKey.NodePoolLabel() ("org.project.service.provider"); the cluster is
// the one the node lives in.
func parsePoolLabel(value, cluster string) (types.PoolKey, error) {
	parts := strings.Split(value, ".")
	if len(parts) != 4 {
		return types.PoolKey{}, fmt.Errorf("%s=%q must be org.project.service.provider", types.LabelPool, value)
	}
	key := types.PoolKey{Org: parts[0], Project: parts[1], Service: parts[2], Provider: parts[3], Cluster: cluster}
	if err := key.Validate(); err != nil {
		return types.PoolKey{}, fmt.Errorf("%s=%q: %w", types.LabelPool, value, err)
	}
	return key, nil
}

// podPoolKey attributes a pod by its org/project/service labels; ok is
// false when any is missing or not a DNS label, since no pool can hold it.
func podPoolKey(labels map[string]string, provider, cluster string) (types.PoolKey, bool) {
	key := types.PoolKey{
		Org:      labels[types.LabelOrg],
		Project:  labels[types.LabelProject],
		Service:  labels[types.LabelService],
		Provider: provider,
		Cluster:  cluster,
	}
	return key, key.Validate() == nil
}
