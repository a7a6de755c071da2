// Package lightsail is the Amazon Lightsail connector. Lightsail has no
// node group of its own, so a group is the pool's instances of one
// bundle, tagged with the pool and the bundle when CreateInstances makes
// them; its target is how many exist. Lightsail takes no client token, so
// idempotency is tag-and-list with names: every instance a decision makes
// has a name derived from the decision's key and its place (Lightsail
// instance names are unique in a region), and a retry lists the group
// and asks only for the names that are missing, so a create whose answer
// was lost is found, not made twice. Scale-down deletes the newest
// instances; DeleteNodes deletes by name (the Kubernetes node name) or
// ARN.
//
// Each instance is created by its own CreateInstances call, so that the
// cluster-join user data can carry the instance's name: "{{nodeName}}" in
// it is replaced by the name, for the join script to register the node
// under (kubeadm's nodeRegistration.name, k3s's --node-name); Lightsail's
// own hostname is the private address. Node labels and taints come from
// the join script too; spec.Labels become instance tags.
package lightsail

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	ls "github.com/aws/aws-sdk-go-v2/service/lightsail"

	"github.com/hanzoai/visor-fleet/connectors"
	awsconn "github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package.
const ProviderName = "lightsail"

// Config says where instances go and what they boot. Credentials is a
// reference whose secret is an IAM access key
// "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" allowed
// lightsail:CreateInstances, GetInstances, DeleteInstance and TagResource.
type Config struct {
	connectors.CommonConfig
	// JoinConfig's clusterJoin is the launch script (user data);
	// "{{nodeName}}" in it becomes the instance's name.
	connectors.JoinConfig
	// Region is the AWS region, e.g. us-east-1; AvailabilityZone the zone
	// instances go to, e.g. us-east-1a.
	Region           string `json:"region"`
	AvailabilityZone string `json:"availabilityZone"`
	// BlueprintID is the OS image, e.g. ubuntu_24_04.
	BlueprintID string `json:"blueprintID"`
	// KeyPairName installs a Lightsail key pair, if set (default: the
	// region's default key pair).
	KeyPairName string `json:"keyPairName,omitempty"`
	// IPAddressType is dualstack (default), ipv4 or ipv6.
	IPAddressType string `json:"ipAddressType,omitempty"`
	// Endpoint overrides the regional endpoint (a loopback fake).
	Endpoint string `json:"endpoint,omitempty"`
}

// Provider implements connectors.Provider for Lightsail instances.
type Provider struct {
	cfg      Config
	client   *ls.Client
	userData string
}

var _ connectors.Provider = (*Provider)(nil)

// New checks cfg, resolves the access key and the cluster-join user data
// inside the worker, and builds the SDK client. It makes no API call: a
// key AWS refuses surfaces on the first call as a Permanent error naming
// the reference. The SDK does not retry; the activity's retry policy does.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, invalid("configure", err)
	}
	secret, err := cfg.Credentials.Resolve(ctx, secrets)
	if err != nil {
		return nil, err
	}
	creds, err := awsconn.ParseCredential(secret)
	if err != nil {
		return nil, invalid("configure", errors.New("credential "+string(cfg.Credentials)+": "+err.Error()))
	}
	p := &Provider{cfg: cfg}
	if p.userData, err = cfg.UserData(ctx, secrets); err != nil {
		return nil, err
	}
	opts := ls.Options{
		Region:      cfg.Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil }),
		Retryer:     aws.NopRetryer{},
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	p.client = ls.New(opts)
	return p, nil
}

// Name is "lightsail".
func (p *Provider) Name() string { return ProviderName }

// Catalog returns the configured catalog, or the built-in bundles.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return p.cfg.CatalogOr(Catalog()), nil
}

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
