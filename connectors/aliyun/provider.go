// Package aliyun is the Alibaba Cloud ECS connector. ECS has no node group
// of its own here (ESS scaling groups are a separate service), so a group
// is the pool's instances of one instance type, tagged with the pool and
// the type when RunInstances creates them; its target is how many exist.
// RunInstances carries a ClientToken derived from the decision's
// idempotency key, so ECS itself answers a repeated call with the
// instances the first one created.
package aliyun

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	openapiutil "github.com/alibabacloud-go/darabonba-openapi/v2/utils"
	ecs "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package
// (Aliyun, as the source documents call Alibaba Cloud).
const ProviderName = "aliyun"

// Config says where instances go and what they boot. Credentials is a
// reference whose secret is an AccessKey pair "ACCESS_KEY_ID:ACCESS_KEY_SECRET"
// (a RAM user's, allowed ecs:RunInstances, ecs:DescribeInstances and
// ecs:DeleteInstances).
type Config struct {
	connectors.CommonConfig
	// JoinConfig's clusterJoin is the cloud-init user data.
	connectors.JoinConfig
	// RegionID is the ECS region, e.g. us-east-1.
	RegionID string `json:"regionId"`
	// ZoneID pins instances to one zone; empty lets the vSwitch decide.
	ZoneID          string `json:"zoneId,omitempty"`
	ImageID         string `json:"imageId"`
	SecurityGroupID string `json:"securityGroupId"`
	VSwitchID       string `json:"vSwitchId"`
	// KeyPairName installs an SSH key pair, if set.
	KeyPairName string `json:"keyPairName,omitempty"`
	// SystemDiskCategory defaults to cloud_essd; SystemDiskGiB to 40 (the
	// nodes' ephemeral storage in the catalog).
	SystemDiskCategory string `json:"systemDiskCategory,omitempty"`
	SystemDiskGiB      int    `json:"systemDiskGiB,omitempty"`
	// Endpoint overrides the regional endpoint (host[:port]), e.g. a
	// loopback fake; Protocol is then "http" or "https" (default https).
	Endpoint string `json:"endpoint,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

// Provider implements connectors.Provider for ECS instances.
type Provider struct {
	cfg      Config
	client   *ecs.Client
	userData string // base64, as RunInstances takes it
}

var (
	_ connectors.Provider   = (*Provider)(nil)
	_ connectors.LeakFinder = (*Provider)(nil)
)

// New checks cfg, resolves the AccessKey pair and the cluster-join user
// data inside the worker, and builds the SDK client. A malformed
// credential is a Permanent error naming the reference, never the value.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, invalid("configure", err)
	}
	secret, err := cfg.Credentials.ResolveToken(ctx, secrets, ProviderName)
	if err != nil {
		return nil, err
	}
	id, key, ok := strings.Cut(secret, ":")
	if !ok || id == "" || key == "" {
		return nil, invalid("configure", errors.New("the credential from "+string(cfg.Credentials)+" must be ACCESS_KEY_ID:ACCESS_KEY_SECRET"))
	}
	p := &Provider{cfg: cfg}
	data, err := cfg.UserData(ctx, secrets)
	if err != nil {
		return nil, err
	}
	if data != "" {
		p.userData = base64.StdEncoding.EncodeToString([]byte(data))
	}
	oc := &openapiutil.Config{
		AccessKeyId: dara.String(id), AccessKeySecret: dara.String(key), RegionId: dara.String(cfg.RegionID),
		UserAgent: dara.String("visor-fleet"), ConnectTimeout: dara.Int(10_000), ReadTimeout: dara.Int(60_000),
	}
	if cfg.Endpoint != "" {
		oc.Endpoint = dara.String(cfg.Endpoint)
	}
	if cfg.Protocol != "" {
		oc.Protocol = dara.String(cfg.Protocol)
	}
	if p.client, err = ecs.NewClient(oc); err != nil {
		return nil, invalid("configure", err)
	}
	return p, nil
}

// Name is "aliyun".
func (p *Provider) Name() string { return ProviderName }

// Catalog returns the configured catalog, or the built-in one with the
// configured system disk as every type's root disk.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return p.cfg.CatalogOr(catalogWithDisk(int64(p.systemDiskGiB()))), nil
}

func (p *Provider) systemDiskGiB() int {
	if p.cfg.SystemDiskGiB > 0 {
		return p.cfg.SystemDiskGiB
	}
	return defaultSystemDiskGiB
}

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
