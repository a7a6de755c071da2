package aliyun

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	ecs "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// instance is one ECS instance as DescribeInstances lists it.
type instance struct {
	id, hostName, instanceType, status string
	created                            time.Time
	tags                               map[string]string
}

func (i instance) toInstance() connectors.Instance {
	return connectors.Instance{ID: i.id, Name: i.hostName, State: instanceState(i.status), CreatedAt: i.created}
}

// instanceState: Pending and Starting are on their way; Stopping and
// Stopped are there, whatever Kubernetes makes of them.
func instanceState(status string) connectors.InstanceState {
	switch status {
	case "Pending", "Starting":
		return connectors.InstanceCreating
	default:
		return connectors.InstanceRunning
	}
}

// listInstances lists the region's instances carrying every tag, oldest
// first, following NextToken.
func (p *Provider) listInstances(ctx context.Context, op string, tags map[string]string) ([]instance, error) {
	req := &ecs.DescribeInstancesRequest{RegionId: dara.String(p.cfg.RegionID), MaxResults: dara.Int32(100)}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		req.Tag = append(req.Tag, &ecs.DescribeInstancesRequestTag{Key: dara.String(k), Value: dara.String(tags[k])})
	}
	var out []instance
	for {
		resp, err := p.client.DescribeInstancesWithContext(ctx, req, &dara.RuntimeOptions{})
		if err != nil {
			return nil, p.classify(op, err)
		}
		body := resp.Body
		if body == nil {
			break
		}
		if body.Instances != nil {
			for _, in := range body.Instances.Instance {
				out = append(out, fromAPI(in))
			}
		}
		if dara.StringValue(body.NextToken) == "" {
			break
		}
		req.NextToken = body.NextToken
	}
	slices.SortFunc(out, func(a, b instance) int { return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.id, b.id)) })
	return out, nil
}

func fromAPI(in *ecs.DescribeInstancesResponseBodyInstancesInstance) instance {
	i := instance{
		id: dara.StringValue(in.InstanceId), hostName: dara.StringValue(in.HostName),
		instanceType: dara.StringValue(in.InstanceType), status: dara.StringValue(in.Status), tags: map[string]string{},
	}
	// CreationTime is ISO 8601 to the minute, in UTC: 2026-12-01T20:31Z.
	if t, err := time.Parse("2006-01-02T15:04Z", dara.StringValue(in.CreationTime)); err == nil {
		i.created = t
	}
	if in.Tags != nil {
		for _, t := range in.Tags.Tag {
			i.tags[dara.StringValue(t.TagKey)] = dara.StringValue(t.TagValue)
		}
	}
	return i
}

// groupSize is the group a pool-tagged instance belongs to: its size tag,
// when that is a valid type and really the instance's type. Any other
// instance of the pool is a leak.
func groupSize(i instance) (string, bool) {
	size := i.tags[TagSize]
	if !instanceTypeRE.MatchString(size) || size != i.instanceType {
		return "", false
	}
	return size, true
}

// NodeGroups lists the pool's instances grouped by instance type. A group
// with no instances left does not show; its ID still works for
// SetTargetSize.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	const op = connectors.OpNodeGroups
	label := pool.NodePoolLabel()
	all, err := p.listInstances(ctx, op, map[string]string{TagPool: label})
	if err != nil {
		return nil, err
	}
	bySize := map[string][]instance{}
	for _, i := range all {
		if size, ok := groupSize(i); ok {
			bySize[size] = append(bySize[size], i)
		}
	}
	groups := make([]connectors.NodeGroup, 0, len(bySize))
	for _, size := range slices.Sorted(maps.Keys(bySize)) {
		groups = append(groups, toNodeGroup(group{poolLabel: label, size: size}, bySize[size]))
	}
	return groups, nil
}

func (g group) selector() map[string]string {
	return map[string]string{TagPool: g.poolLabel, TagSize: g.size}
}

func (p *Provider) groupInstances(ctx context.Context, op string, g group) ([]instance, error) {
	all, err := p.listInstances(ctx, op, g.selector())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(i instance) bool { s, ok := groupSize(i); return !ok || s != g.size }), nil
}

func toNodeGroup(g group, instances []instance) connectors.NodeGroup {
	ng := connectors.NodeGroup{
		ID: g.id(), Name: g.id(), Size: g.size, TargetSize: len(instances),
		Labels: map[string]string{types.LabelPool: g.poolLabel},
	}
	for _, i := range instances {
		ng.Instances = append(ng.Instances, i.toInstance())
	}
	return ng
}

// matchInstances picks the instances named by host name or instance ID.
func matchInstances(instances []instance, namesOrIDs []string) []instance {
	var out []instance
	for _, i := range instances {
		if slices.Contains(namesOrIDs, i.id) || slices.Contains(namesOrIDs, i.hostName) {
			out = append(out, i)
		}
	}
	return out
}
