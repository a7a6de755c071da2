// Package hetzner is the Hetzner Cloud connector. Hetzner has no node
// groups, so a group is the set of servers labelled with the pool and the
// server type; its target size is simply how many of them exist. Every
// server gets a deterministic name and a label derived from the
// idempotency key, so a repeated create finds its server instead of making
// a second one.
package hetzner

import (
	"context"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this connector.
const ProviderName = "hetzner"

// Config says where servers go, what they boot and where the secrets live.
type Config struct {
	// Credentials locates the API token.
	connectors.CommonConfig
	// JoinConfig's clusterJoin is the cloud-init user data that joins a
	// new server to the cluster and sets its Kubernetes node labels;
	// empty, servers boot without user data (an image that joins by itself).
	connectors.JoinConfig
	// BaseURL overrides the API endpoint, e.g. a loopback fake's URL + "/v1".
	BaseURL string `json:"baseURL,omitempty"`
	// Location is where servers are created, e.g. fsn1.
	Location string `json:"location"`
	// Image is the image name or ID servers boot, e.g. ubuntu-24.04.
	Image string `json:"image"`
	// Network is the name of a private network to attach, if any.
	Network string `json:"network,omitempty"`
	// SSHKeys are names of SSH keys in the project to install, if any.
	SSHKeys []string `json:"sshKeys,omitempty"`
	// RetryMax turns on hcloud-go's own retries (rate limit, conflict,
	// timeouts) inside one call. Zero leaves retrying to the activity's
	// retry policy. Either way a repeated create finds its server by name.
	RetryMax int `json:"retryMax,omitempty"`
}

// Provider implements connectors.Provider for Hetzner Cloud servers.
type Provider struct {
	cfg      Config
	client   *hcloud.Client
	userData string
}

var _ connectors.Provider = (*Provider)(nil)

// New checks the config, resolves the token and the cluster-join user
// data, and builds the API client. A missing or unreadable credential is a
// Permanent error naming the reference.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	token, err := cfg.Credentials.ResolveToken(ctx, secrets, ProviderName)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg}
	if p.userData, err = cfg.UserData(ctx, secrets); err != nil {
		return nil, err
	}
	opts := []hcloud.ClientOption{
		hcloud.WithToken(token),
		hcloud.WithApplication("visor-fleet", ""),
		hcloud.WithRetryOpts(hcloud.RetryOpts{MaxRetries: cfg.RetryMax}),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, hcloud.WithEndpoint(cfg.BaseURL))
	}
	p.client = hcloud.NewClient(opts...)
	return p, nil
}

// Name is "hetzner".
func (p *Provider) Name() string { return ProviderName }

// Catalog returns the configured server types, or the built-in
// Hetzner catalog.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return p.cfg.CatalogOr(catalogs.Hetzner()), nil
}
