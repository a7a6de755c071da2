package digitalocean

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/digitalocean/godo"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// NodeGroups lists the cluster's node pools labelled hanzo.ai/pool for this pool.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	pools, err := p.listPools(ctx)
	if err != nil {
		return nil, err
	}
	var groups []connectors.NodeGroup
	for _, np := range pools {
		if np.Labels[types.LabelPool] == pool.NodePoolLabel() {
			groups = append(groups, toNodeGroup(np))
		}
	}
	return groups, nil
}

// SetTargetSize sets the pool's fixed node count and turns DigitalOcean's
// own autoscaler off on it, so the two never fight. A pool already at the
// target with auto-scale off is left alone.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, _ connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	np, err := p.ownedPool(ctx, op, groupID)
	if err != nil {
		return err
	}
	if np.Count == target && !np.AutoScale {
		return nil
	}
	_, _, err = p.client.Kubernetes.UpdateNodePool(ctx, p.cfg.ClusterID, np.ID, resizeRequest(np, target))
	return p.classify(op, err)
}

// resizeRequest carries the pool's name (the API requires it) and echoes
// its tags, labels and taints so an update that replaces them keeps ours.
func resizeRequest(np *godo.KubernetesNodePool, target int) *godo.KubernetesNodePoolUpdateRequest {
	taints := slices.Clone(np.Taints)
	return &godo.KubernetesNodePoolUpdateRequest{
		Name:      np.Name,
		Count:     &target,
		AutoScale: new(false),
		Tags:      userTags(np.Tags),
		Labels:    maps.Clone(np.Labels),
		Taints:    &taints,
	}
}

// userTags drops the k8s, k8s:<cluster> and k8s:worker tags DigitalOcean
// adds to every pool; they are not the caller's to set.
func userTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t != "k8s" && !strings.HasPrefix(t, "k8s:") {
			out = append(out, t)
		}
	}
	return out
}

// ownedPool fetches a pool and refuses one Visor does not manage, so a
// wrong group ID can never resize someone else's pool.
func (p *Provider) ownedPool(ctx context.Context, op, groupID string) (*godo.KubernetesNodePool, error) {
	np, _, err := p.client.Kubernetes.GetNodePool(ctx, p.cfg.ClusterID, groupID)
	if err != nil {
		return nil, p.classify(op, err)
	}
	if np.Labels[types.LabelPool] == "" {
		return nil, errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("node pool %s (%s) has no %s label: Visor does not manage it", np.ID, np.Name, types.LabelPool))
	}
	return np, nil
}

// listPools returns every node pool of the cluster; the API answers the
// whole list in one page.
func (p *Provider) listPools(ctx context.Context) ([]*godo.KubernetesNodePool, error) {
	pools, _, err := p.client.Kubernetes.ListNodePools(ctx, p.cfg.ClusterID, nil)
	if err != nil {
		return nil, p.classify("list node pools", err)
	}
	return pools, nil
}

func toNodeGroup(np *godo.KubernetesNodePool) connectors.NodeGroup {
	g := connectors.NodeGroup{
		ID: np.ID, Name: np.Name, Size: np.Size, TargetSize: np.Count,
		Labels: maps.Clone(np.Labels),
	}
	for _, n := range np.Nodes {
		g.Instances = append(g.Instances, connectors.Instance{ID: n.ID, Name: n.Name, State: instanceState(n), CreatedAt: n.CreatedAt})
	}
	return g
}

// instanceState maps DOKS node states (provisioning, running, draining,
// deleting) onto the connector's three stages.
func instanceState(n *godo.KubernetesNode) connectors.InstanceState {
	if n.Status == nil {
		return connectors.InstanceCreating
	}
	switch n.Status.State {
	case "running":
		return connectors.InstanceRunning
	case "draining", "deleting":
		return connectors.InstanceDeleting
	default:
		return connectors.InstanceCreating
	}
}
