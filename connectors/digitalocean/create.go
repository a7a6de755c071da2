package digitalocean

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/digitalocean/godo"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// keyTagPrefix starts the tag that carries a create call's idempotency key.
// The key is hashed: tags allow only letters, digits, ':', '-' and '_'.
const keyTagPrefix = "visor-key-"

// KeyTag is the tag a pool created under key carries.
func KeyTag(key connectors.IdempotencyKey) string {
	sum := sha256.Sum256([]byte(key))
	return keyTagPrefix + hex.EncodeToString(sum[:16])
}

// CreateNodeGroup creates a fixed-size pool labelled for the Visor pool and
// tagged with the key. It lists before it creates and lists again after,
// so a repeat of the call, or a POST that godo's retries sent twice, ends
// with exactly one pool: extra copies are deleted, keeping the lowest ID,
// which every racing caller picks alike.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	req, err := createRequest(spec, key)
	if err != nil {
		return connectors.NodeGroup{}, errclass.New(errclass.Permanent, ProviderName, op, err)
	}
	tag := KeyTag(key)
	found, err := p.poolsTagged(ctx, tag)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if len(found) == 0 {
		created, _, postErr := p.client.Kubernetes.CreateNodePool(ctx, p.cfg.ClusterID, req)
		// Whatever the answer, the POST may have been applied (a 500 after
		// the write, a repeat refused as a duplicate): the list decides.
		found, err = p.poolsTagged(ctx, tag)
		if err != nil {
			if postErr != nil {
				return connectors.NodeGroup{}, p.classify(op, postErr)
			}
			return connectors.NodeGroup{}, err
		}
		if created != nil && !slices.ContainsFunc(found, func(np *godo.KubernetesNodePool) bool { return np.ID == created.ID }) {
			found = append(found, created)
		}
		if len(found) == 0 {
			return connectors.NodeGroup{}, p.classify(op, postErr)
		}
	}
	keep, err := p.keepOne(ctx, found)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	return toNodeGroup(keep), nil
}

// createRequest checks what is DigitalOcean's own in the spec (the pool,
// size, labels and key were checked by connectors.Checked, which
// wraps every provider a worker builds) and builds the pool to create.
func createRequest(spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (*godo.KubernetesNodePoolCreateRequest, error) {
	if spec.TargetSize < 1 {
		return nil, fmt.Errorf("spec.targetSize %d: a fixed-size DOKS node pool needs at least 1 node", spec.TargetSize)
	}
	name := spec.Name
	if name == "" {
		name = defaultPoolName(spec, key)
	} else if err := types.ValidateDNSLabel("spec.name", name); err != nil {
		return nil, err
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[types.LabelPool] = spec.Pool.NodePoolLabel()
	return &godo.KubernetesNodePoolCreateRequest{
		Name:      name,
		Size:      spec.Size,
		Count:     spec.TargetSize,
		Tags:      []string{KeyTag(key)},
		Labels:    labels,
		Taints:    taintsOf(spec.Taints),
		AutoScale: false, // Visor owns the count; DigitalOcean's autoscaler stays off.
	}, nil
}

// defaultPoolName is "<service>-<key hash>": readable in the console and
// on node names, distinct per create call.
func defaultPoolName(spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) string {
	service := spec.Pool.Service
	if len(service) > 40 {
		service = service[:40]
	}
	return service + "-" + KeyTag(key)[len(keyTagPrefix):][:8]
}

func (p *Provider) poolsTagged(ctx context.Context, tag string) ([]*godo.KubernetesNodePool, error) {
	pools, err := p.listPools(ctx)
	if err != nil {
		return nil, err
	}
	var out []*godo.KubernetesNodePool
	for _, np := range pools {
		if slices.Contains(np.Tags, tag) {
			out = append(out, np)
		}
	}
	return out, nil
}

// keepOne keeps the pool with the lowest ID and deletes the others.
func (p *Provider) keepOne(ctx context.Context, pools []*godo.KubernetesNodePool) (*godo.KubernetesNodePool, error) {
	slices.SortFunc(pools, func(a, b *godo.KubernetesNodePool) int { return cmp.Compare(a.ID, b.ID) })
	for _, extra := range pools[1:] {
		_, err := p.client.Kubernetes.DeleteNodePool(ctx, p.cfg.ClusterID, extra.ID)
		if err := p.classify("delete duplicate node pool "+extra.ID, err); err != nil && !errclass.IsNotFound(err) {
			return nil, err
		}
	}
	return pools[0], nil
}

// taintsOf is the pool's declared node taints in DOKS's form.
func taintsOf(ts []types.Taint) []godo.Taint {
	out := make([]godo.Taint, 0, len(ts))
	for _, t := range ts {
		out = append(out, godo.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	return out
}
