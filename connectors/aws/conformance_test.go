package aws

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/conformance"
)

var conformancePools atomic.Int32

// EC2 mode against moto_server, through ec2Front for faults and EC2's
// ClientToken deduplication.
func TestConformanceEC2(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Double {
		direct, fx := newEC2Provider(t)
		front := newEC2Front(t, motoEndpoint)
		cfg := direct.cfg
		cfg.Endpoint = front.URL
		p, err := New(context.Background(), cfg, nil)
		require.NoError(t, err)
		pool := testPool(fmt.Sprintf("conformance-%d", conformancePools.Add(1)))
		return conformance.Double{
			Provider:   p,
			Spec:       connectors.NodeGroupSpec{Pool: pool, Size: "c6i.large"},
			Credential: cfg.Credentials,
			Secret:     "secrettesting",
			Rebuild: func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error) {
				c := cfg
				c.Credentials = ref
				c.ImageID, c.Subnets = fx.image, []string{fx.subnet}
				return New(ctx, c, nil)
			},
			Machines: func(t *testing.T) int { return liveTagged(t, direct, pool.NodePoolLabel()) },
			// Every attempt the SDK makes fails, the first after launching.
			LoseAnswer: func(*testing.T) {
				front.inject(ec2Fault{action: "RunInstances", status: 500, code: "InternalError", times: 3, afterApply: true})
			},
			Refuse: func(_ *testing.T, f conformance.Failure) string {
				switch f {
				case conformance.Quota:
					front.inject(ec2Fault{action: "RunInstances", status: 400, code: "InstanceLimitExceeded", times: 10})
				case conformance.Capacity:
					front.inject(ec2Fault{action: "RunInstances", status: 500, code: "InsufficientInstanceCapacity", times: 10})
				case conformance.Auth:
					front.inject(ec2Fault{status: 401, code: "AuthFailure", times: 100})
				}
				return ""
			},
		}
	})
}

// liveTagged counts pending and running instances tagged for the pool,
// asked of moto directly.
func liveTagged(t *testing.T, p *Provider, poolLabel string) int {
	t.Helper()
	out, err := p.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + tagPool), Values: []string{poolLabel}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}})
	require.NoError(t, err)
	n := 0
	for _, r := range out.Reservations {
		n += len(r.Instances)
	}
	return n
}
