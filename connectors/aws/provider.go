// Package aws connects pools to AWS in one of three modes: EKS managed node
// groups, EC2 Auto Scaling groups, or plain EC2 instances grouped by tag.
package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package.
const ProviderName = "aws"

// Mode selects which AWS object a node group is.
type Mode string

const (
	// ModeEKS: EKS managed node groups labelled hanzo.ai/pool.
	ModeEKS Mode = "eks"
	// ModeASG: EC2 Auto Scaling groups tagged hanzo.ai/pool.
	ModeASG Mode = "asg"
	// ModeEC2: a launch template tagged hanzo.ai/pool is the group; its
	// instances are plain EC2 instances tagged with the template's name.
	ModeEC2 Mode = "ec2"
)

// Config says where and how to reach AWS. Credentials is a reference whose
// secret is "ACCESS_KEY_ID:SECRET_ACCESS_KEY" or
// "ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN".
type Config struct {
	connectors.CommonConfig
	// Endpoint overrides every service's endpoint (moto_server in tests).
	Endpoint string `json:"endpoint,omitempty"`
	Region   string `json:"region"`
	Mode     Mode   `json:"mode"`

	// ClusterName is the EKS cluster (eks mode).
	ClusterName string `json:"clusterName,omitempty"`
	// NodeRoleARN is the IAM role new EKS node groups run as (eks mode, create).
	NodeRoleARN string `json:"nodeRoleARN,omitempty"`
	// Subnets new groups and instances are placed in (eks: required for
	// create; asg: the group's VPCZoneIdentifier; ec2: spread by ordinal).
	Subnets []string `json:"subnets,omitempty"`
	// LaunchTemplate is the base launch template new Auto Scaling groups
	// use, with the size as an instance-type override (asg mode, create).
	LaunchTemplate string `json:"launchTemplate,omitempty"`
	// ImageID and SecurityGroupIDs go into each group's launch template (ec2 mode, create).
	ImageID          string   `json:"imageID,omitempty"`
	SecurityGroupIDs []string `json:"securityGroupIDs,omitempty"`

	// InterruptionQueue is the SQS queue (name or URL) EventBridge sends
	// EC2 spot interruption warnings and rebalance recommendations to, as
	// Karpenter's interruption queue is set up; empty: no notices are read.
	InterruptionQueue string `json:"interruptionQueue,omitempty"`
}

// Provider is connectors.Provider for AWS.
type Provider struct {
	cfg     Config
	catalog []types.InstanceType
	ec2     *ec2.Client
	asg     *autoscaling.Client
	eks     *eks.Client
	sqs     *sqs.Client
	mode    backend
	notices notices
}

var (
	_ connectors.Provider   = (*Provider)(nil)
	_ connectors.LeakFinder = (*Provider)(nil)
)

// backend is one mode's implementation; Provider validates arguments first.
type backend interface {
	nodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error)
	setTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error
	createNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, name string, key connectors.IdempotencyKey) (connectors.NodeGroup, error)
	deleteNodes(ctx context.Context, groupID string, nodeNames []string) error
	// deleteNodeGroup deletes the group and its instances; gone is nil.
	deleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error
}

// New checks cfg, resolves the credential reference and builds the clients.
// It makes no API call; a key AWS rejects surfaces on the first call as a
// Permanent error naming the reference.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "New", err)
	}
	secret, err := cfg.Credentials.Resolve(ctx, secrets)
	if err != nil {
		return nil, err
	}
	creds, err := parseCredential(secret)
	if err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "New",
			fmt.Errorf("credential %s: %w", cfg.Credentials, err))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion(cfg.Region),
		config.WithCredentialsProvider(aws.CredentialsProviderFunc(
			func(context.Context) (aws.Credentials, error) { return creds, nil })))
	if err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "New", err)
	}
	if cfg.Endpoint != "" {
		awsCfg.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	p := &Provider{
		cfg:     cfg,
		catalog: cfg.CatalogOr(catalogs.InRegion(catalogs.AWS(), cfg.Region)),
		ec2:     ec2.NewFromConfig(awsCfg),
		asg:     autoscaling.NewFromConfig(awsCfg),
		eks:     eks.NewFromConfig(awsCfg),
		sqs:     sqs.NewFromConfig(awsCfg),
	}
	switch cfg.Mode {
	case ModeEKS:
		p.mode = &eksMode{p}
	case ModeASG:
		p.mode = &asgMode{p}
	case ModeEC2:
		p.mode = &ec2Mode{p}
	}
	return p, nil
}

// Name implements connectors.Provider.
func (p *Provider) Name() string { return ProviderName }

// Mode reports which kind of group this provider manages.
func (p *Provider) Mode() Mode { return p.cfg.Mode }

// Catalog implements connectors.Provider.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return append([]types.InstanceType(nil), p.catalog...), nil
}

// NodeGroups implements connectors.Provider. Its arguments, as every
// call's, are checked by connectors.Checked, which wraps each provider a
// worker builds.
func (p *Provider) NodeGroups(ctx context.Context, pool types.PoolKey) ([]connectors.NodeGroup, error) {
	return p.mode.nodeGroups(ctx, pool)
}

// SetTargetSize implements connectors.Provider.
func (p *Provider) SetTargetSize(ctx context.Context, groupID string, target int, key connectors.IdempotencyKey) error {
	return p.mode.setTargetSize(ctx, groupID, target, key)
}

// CreateNodeGroup implements connectors.Provider. The group's name is
// derived from the key, so a repeat finds the first call's group.
func (p *Provider) CreateNodeGroup(ctx context.Context, spec connectors.NodeGroupSpec, key connectors.IdempotencyKey) (connectors.NodeGroup, error) {
	return p.mode.createNodeGroup(ctx, spec, GroupName(spec, key), key)
}

// DeleteNodes implements connectors.Provider. Node names are the
// instances' private DNS names (what kubelet registers on AWS) or instance
// IDs. Termination is naturally idempotent: an instance already shutting
// down or gone is skipped, so the key is not needed on the wire.
func (p *Provider) DeleteNodes(ctx context.Context, groupID string, nodeNames []string, key connectors.IdempotencyKey) error {
	return p.mode.deleteNodes(ctx, groupID, nodeNames)
}

// DeleteNodeGroup implements connectors.Provider: EKS deletes the managed
// node group, ASG deletes the group with ForceDelete (its instances go
// with it), EC2 terminates the group's instances and deletes its launch
// template. A group already gone is success.
func (p *Provider) DeleteNodeGroup(ctx context.Context, groupID string, key connectors.IdempotencyKey) error {
	err := p.mode.deleteNodeGroup(ctx, groupID, key)
	if errclass.IsNotFound(err) {
		return nil
	}
	return err
}

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
