package digitalocean

import (
	"context"

	"github.com/digitalocean/godo"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// DeleteNodes deletes the named nodes (Kubernetes node names, or DOKS node
// IDs for a node that never registered) from the pool
// without replacement and without draining (Visor drained them already).
// Deleting without replacement lowers the pool's count, so DigitalOcean
// never brings them back. A node no longer in the pool is already gone;
// one already deleting is not asked again, so a retry never lowers the
// count twice.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	np, err := p.ownedPool(ctx, op, groupID)
	if err != nil {
		return err
	}
	byName := make(map[string]*godo.KubernetesNode, 2*len(np.Nodes))
	for _, n := range np.Nodes {
		byName[n.ID] = n
		byName[n.Name] = n
	}
	asked := map[string]bool{}
	for _, name := range nodeNames {
		n, ok := byName[name]
		if !ok || asked[n.ID] || (n.Status != nil && n.Status.State == "deleting") {
			continue
		}
		asked[n.ID] = true
		_, err := p.client.Kubernetes.DeleteNode(ctx, p.cfg.ClusterID, np.ID, n.ID,
			&godo.KubernetesNodeDeleteRequest{Replace: false, SkipDrain: true})
		if err := p.classify(op+" "+name, err); err != nil && !errclass.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// DeleteNodeGroup deletes the node pool and its droplets: DOKS refuses a
// fixed pool of zero nodes, so deregistration removes the pool instead. A
// pool already gone is success; one Visor does not manage is refused.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	np, err := p.ownedPool(ctx, op, groupID)
	if errclass.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = p.client.Kubernetes.DeleteNodePool(ctx, p.cfg.ClusterID, np.ID)
	if err := p.classify(op, err); err != nil && !errclass.IsNotFound(err) {
		return err
	}
	return nil
}
