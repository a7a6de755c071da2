package lightsail

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ls "github.com/aws/aws-sdk-go-v2/service/lightsail"
	lstypes "github.com/aws/aws-sdk-go-v2/service/lightsail/types"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// instance is one Lightsail instance as GetInstances lists it.
type instance struct {
	name, arn, bundle, state string
	created                  time.Time
	tags                     map[string]string
}

func (i instance) toInstance() connectors.Instance {
	in := connectors.Instance{ID: i.arn, Name: i.name, State: connectors.InstanceRunning, CreatedAt: i.created}
	switch i.state {
	case "pending":
		in.State = connectors.InstanceCreating
	case "shutting-down", "terminated":
		in.State = connectors.InstanceDeleting
	}
	return in
}

// listInstances lists the region's instances carrying every tag, oldest
// first, following pageToken (GetInstances filters by nothing). Instances
// shutting down are gone as far as groups go: they count toward no target.
func (p *Provider) listInstances(ctx context.Context, op string, tags map[string]string) ([]instance, error) {
	var out []instance
	in := &ls.GetInstancesInput{}
	for {
		page, err := p.client.GetInstances(ctx, in)
		if err != nil {
			return nil, p.classify(op, err)
		}
		for _, it := range page.Instances {
			i := fromAPI(it)
			if i.state != "shutting-down" && i.state != "terminated" && hasTags(i.tags, tags) {
				out = append(out, i)
			}
		}
		if aws.ToString(page.NextPageToken) == "" {
			break
		}
		in.PageToken = page.NextPageToken
	}
	slices.SortFunc(out, func(a, b instance) int { return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.name, b.name)) })
	return out, nil
}

func hasTags(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func fromAPI(it lstypes.Instance) instance {
	i := instance{name: aws.ToString(it.Name), arn: aws.ToString(it.Arn), bundle: aws.ToString(it.BundleId), tags: map[string]string{}}
	if it.State != nil {
		i.state = aws.ToString(it.State.Name)
	}
	if it.CreatedAt != nil {
		i.created = *it.CreatedAt
	}
	for _, t := range it.Tags {
		i.tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return i
}

// member reports a pool-tagged instance that belongs to its size tag's
// group: the tag a bundle ID, and really the instance's bundle.
func member(i instance) bool {
	return bundleRE.MatchString(i.tags[TagSize]) && i.tags[TagSize] == i.bundle
}

func (g group) selector() map[string]string {
	return map[string]string{TagPool: g.poolLabel, TagSize: g.bundle}
}

func (p *Provider) groupInstances(ctx context.Context, op string, g group) ([]instance, error) {
	all, err := p.listInstances(ctx, op, g.selector())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(i instance) bool { return !member(i) }), nil
}

func toNodeGroup(g group, instances []instance) connectors.NodeGroup {
	ng := connectors.NodeGroup{ID: g.id(), Name: g.id(), Size: g.bundle, TargetSize: len(instances), Labels: map[string]string{}}
	for _, i := range instances {
		ng.Instances = append(ng.Instances, i.toInstance())
		if len(ng.Labels) == 0 {
			ng.Labels = connectors.TenantTags(i.tags, "visor-")
		}
	}
	return ng
}

// NodeGroups lists the pool's instances grouped by bundle. A group with
// no instances left does not show; its ID still works for SetTargetSize.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	all, err := p.poolInstances(ctx, connectors.OpNodeGroups, pool)
	if err != nil {
		return nil, err
	}
	label := pool.NodePoolLabel()
	byBundle := map[string][]instance{}
	for _, i := range all {
		if member(i) {
			byBundle[i.bundle] = append(byBundle[i.bundle], i)
		}
	}
	groups := make([]connectors.NodeGroup, 0, len(byBundle))
	for _, b := range slices.Sorted(maps.Keys(byBundle)) {
		groups = append(groups, toNodeGroup(group{poolLabel: label, bundle: b}, byBundle[b]))
	}
	return groups, nil
}

// CreateNodeGroup creates spec.TargetSize instances of spec.Size for the
// pool and returns the group; a repeat with the same key creates only the
// names its first call did not.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	const op = connectors.OpCreateNodeGroup
	if err := p.checkSpec(ctx, spec); err != nil {
		return connectors.NodeGroup{}, invalid(op, err)
	}
	g := group{poolLabel: spec.Pool.NodePoolLabel(), bundle: spec.Size}
	live, err := p.groupInstances(ctx, op, g)
	if err != nil {
		return connectors.NodeGroup{}, err
	}
	if err := p.create(ctx, op, g, key, spec.TargetSize, live, spec.Labels); err != nil {
		return connectors.NodeGroup{}, err
	}
	if live, err = p.groupInstances(ctx, op, g); err != nil {
		return connectors.NodeGroup{}, err
	}
	return toNodeGroup(g, live), nil
}

// checkSpec checks what is Lightsail's own in the spec: a bundle of the
// catalog and tags Lightsail takes. The pool, target and key were checked
// by connectors.Checked, which wraps every provider a worker builds.
func (p *Provider) checkSpec(ctx context.Context, spec connectors.NodeGroupSpec) error {
	catalog, _ := p.Catalog(ctx)
	if !bundleRE.MatchString(spec.Size) || !slices.ContainsFunc(catalog, func(it types.InstanceType) bool { return it.Name == spec.Size }) {
		return fmt.Errorf("spec.size %q is not a bundle of the Lightsail catalog", spec.Size)
	}
	if len(spec.Labels) > 47 {
		return fmt.Errorf("spec.labels: %d labels; Lightsail allows 50 tags per resource, 3 of them Visor's", len(spec.Labels))
	}
	for k := range spec.Labels {
		if strings.HasPrefix(k, "visor-") || strings.HasPrefix(k, "aws:") {
			return fmt.Errorf("spec.labels: %s is reserved (visor- and aws: are not tenant tags)", k)
		}
	}
	return nil
}

// create makes key's instances of the group up to amount: the names
// key's 1st to amount-th, those not already there.
func (p *Provider) create(ctx context.Context, op string, g group, key connectors.IdempotencyKey, amount int, live []instance, labels map[string]string) error {
	have := map[string]bool{}
	for _, i := range live {
		have[i.name] = true
	}
	if labels == nil && len(live) > 0 {
		labels = connectors.TenantTags(live[0].tags, "visor-")
	}
	tags := maps.Clone(labels)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, g.selector())
	tags[TagKey] = connectors.KeyTag(key)
	var lsTags []lstypes.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		lsTags = append(lsTags, lstypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	for i := 1; i <= amount; i++ {
		name := g.InstanceName(key, i)
		if have[name] {
			continue
		}
		in := &ls.CreateInstancesInput{
			InstanceNames: []string{name}, AvailabilityZone: aws.String(p.cfg.AvailabilityZone),
			BlueprintId: aws.String(p.cfg.BlueprintID), BundleId: aws.String(g.bundle), Tags: lsTags,
		}
		if p.cfg.KeyPairName != "" {
			in.KeyPairName = aws.String(p.cfg.KeyPairName)
		}
		if p.cfg.IPAddressType != "" {
			in.IpAddressType = lstypes.IpAddressType(p.cfg.IPAddressType)
		}
		if p.userData != "" {
			in.UserData = aws.String(strings.ReplaceAll(p.userData, nodeNamePlaceholder, name))
		}
		if _, err := p.client.CreateInstances(ctx, in); err != nil {
			return p.classify(op+" "+name, err)
		}
	}
	return nil
}

// SetTargetSize makes the group hold target instances: the missing ones
// are created under names from key, or the newest are deleted down to
// target. Instances key already made count toward the target, so a retry
// asks for the same names again and makes no new ones.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	const op = connectors.OpSetTargetSize
	g, live, err := p.group(ctx, op, groupID)
	if err != nil {
		return err
	}
	remove, create := connectors.PlanTarget(live, target, func(i instance) bool { return i.tags[TagKey] == connectors.KeyTag(key) })
	if create > 0 {
		return p.create(ctx, op, g, key, create, live, nil)
	}
	return p.deleteInstances(ctx, op, remove)
}

// DeleteNodes deletes the named instances (the instance name, which is
// the Kubernetes node name, or the ARN) of the group; one not in the
// group is already gone, which is success.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodes
	_, live, err := p.group(ctx, op, groupID)
	if err != nil {
		return err
	}
	named := slices.DeleteFunc(live, func(i instance) bool {
		return !slices.Contains(nodeNames, i.name) && !slices.Contains(nodeNames, i.arn)
	})
	return p.deleteInstances(ctx, op, named)
}

// DeleteNodeGroup deletes every instance of the group; a group with none
// left is already gone.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, _ connectors.IdempotencyKey) error {
	const op = connectors.OpDeleteNodeGroup
	_, live, err := p.group(ctx, op, groupID)
	if err != nil {
		return err
	}
	return p.deleteInstances(ctx, op, live)
}

// group reads a group ID and lists the group's live instances.
func (p *Provider) group(ctx context.Context, op, groupID string) (group, []instance, error) {
	g, err := parseGroupID(groupID)
	if err != nil {
		return group{}, nil, invalid(op, err)
	}
	live, err := p.groupInstances(ctx, op, g)
	return g, live, err
}

// deleteInstances deletes instances one call each (DeleteInstance takes
// one name), with their add-ons; one already gone is success.
func (p *Provider) deleteInstances(ctx context.Context, op string, doomed []instance) error {
	for _, i := range doomed {
		_, err := p.client.DeleteInstance(ctx, &ls.DeleteInstanceInput{InstanceName: aws.String(i.name), ForceDeleteAddOns: aws.Bool(true)})
		if err := p.classify(op+" "+i.name, err); err != nil && !errclass.IsNotFound(err) {
			return err
		}
	}
	return nil
}
