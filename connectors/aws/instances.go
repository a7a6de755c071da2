package aws

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/hanzoai/visor-fleet/connectors"
)

// maxFilterValues is EC2's limit on values in one filter.
const maxFilterValues = 200

// describeInstances pages through DescribeInstances.
func (p *Provider) describeInstances(ctx context.Context, op string, in *ec2.DescribeInstancesInput) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	pages := ec2.NewDescribeInstancesPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, p.classify(op+": ec2:DescribeInstances", err)
		}
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
	}
	return out, nil
}

// describeByFilter describes the instances matching any of values under
// one filter, in chunks EC2 accepts. A filter, unlike InstanceIds, does not
// fail when a value matches nothing.
func (p *Provider) describeByFilter(ctx context.Context, op, filter string, values []string) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	for start := 0; start < len(values); start += maxFilterValues {
		found, err := p.describeInstances(ctx, op, &ec2.DescribeInstancesInput{
			Filters: []ec2types.Filter{{Name: aws.String(filter), Values: values[start:min(start+maxFilterValues, len(values))]}},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// instancesByID describes the given instances; unknown IDs are absent.
func (p *Provider) instancesByID(ctx context.Context, op string, ids []string) (map[string]ec2types.Instance, error) {
	found, err := p.describeByFilter(ctx, op, "instance-id", ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ec2types.Instance, len(found))
	for _, i := range found {
		out[aws.ToString(i.InstanceId)] = i
	}
	return out, nil
}

// instancesByNodeName finds the instance behind each node name: its
// private DNS name (kubelet's default node name on AWS) or its instance
// ID. Names with no instance are absent. Private DNS names are reused when
// an IP is recycled, so a live instance wins over a terminated one.
func (p *Provider) instancesByNodeName(ctx context.Context, op string, names []string) (map[string]ec2types.Instance, error) {
	var dnsNames, ids []string
	for _, n := range names {
		if strings.HasPrefix(n, "i-") {
			ids = append(ids, n)
		} else {
			dnsNames = append(dnsNames, n)
		}
	}
	byDNS, err := p.describeByFilter(ctx, op, "private-dns-name", dnsNames)
	if err != nil {
		return nil, err
	}
	byID, err := p.describeByFilter(ctx, op, "instance-id", ids)
	if err != nil {
		return nil, err
	}
	out := map[string]ec2types.Instance{}
	keep := func(name string, i ec2types.Instance) {
		if prev, ok := out[name]; !ok || isGone(prev) && !isGone(i) {
			out[name] = i
		}
	}
	for _, i := range byDNS {
		keep(aws.ToString(i.PrivateDnsName), i)
	}
	for _, i := range byID {
		keep(aws.ToString(i.InstanceId), i)
	}
	return out, nil
}

func stateName(i ec2types.Instance) ec2types.InstanceStateName {
	if i.State == nil {
		return ""
	}
	return i.State.Name
}

// isGone: the instance is shutting down or terminated; deleting it again
// is a no-op and it no longer counts toward a group's size.
func isGone(i ec2types.Instance) bool {
	s := stateName(i)
	return s == ec2types.InstanceStateNameShuttingDown || s == ec2types.InstanceStateNameTerminated
}

// instanceOf converts an EC2 instance; stopped machines still count as
// members (they exist and are billed for storage), shown as running.
func instanceOf(i ec2types.Instance) connectors.Instance {
	state := connectors.InstanceRunning
	switch stateName(i) {
	case ec2types.InstanceStateNamePending:
		state = connectors.InstanceCreating
	case ec2types.InstanceStateNameShuttingDown, ec2types.InstanceStateNameTerminated:
		state = connectors.InstanceDeleting
	}
	return connectors.Instance{ID: aws.ToString(i.InstanceId), Name: nodeName(i), State: state, CreatedAt: aws.ToTime(i.LaunchTime)}
}

// nodeName is the name kubelet registers: the private DNS name, or the
// instance ID while EC2 has not assigned one yet.
func nodeName(i ec2types.Instance) string {
	if n := aws.ToString(i.PrivateDnsName); n != "" {
		return n
	}
	return aws.ToString(i.InstanceId)
}

func ec2TagMap(tags []ec2types.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func ec2Tags(m map[string]string) []ec2types.Tag {
	out := make([]ec2types.Tag, 0, len(m))
	for k, v := range m {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}
