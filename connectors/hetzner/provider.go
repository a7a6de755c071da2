// Package hetzner is the Hetzner Cloud connector. Hetzner has no node
// groups, so a group is the set of servers labelled with the pool and the
// server type; its target size is simply how many of them exist. Every
// server gets a deterministic name and a label derived from the
// idempotency key, so a repeated create finds its server instead of making
// a second one.
package hetzner

import (
	"context"
	"errors"
	"slices"

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
	// Credentials locates the API token (env:, file: or secret:); it is
	// resolved inside New, never carried as a value.
	Credentials connectors.CredentialRef `json:"credentials"`
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
	// ClusterJoin locates the cloud-init user data that joins a new server
	// to the cluster (and sets its Kubernetes node labels). It holds a join
	// token, so it is a reference too. Empty: servers boot without user
	// data (an image that joins by itself).
	ClusterJoin connectors.CredentialRef `json:"clusterJoin,omitempty"`
	// RetryMax turns on hcloud-go's own retries (rate limit, conflict,
	// timeouts) inside one call. Zero leaves retrying to the activity's
	// retry policy. Either way a repeated create finds its server by name.
	RetryMax int `json:"retryMax,omitempty"`
	// Catalog overrides the built-in catalog (Catalog).
	Catalog []types.InstanceType `json:"catalog,omitempty"`
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
	var problems []error
	if cfg.Location == "" {
		problems = append(problems, errors.New("location is empty; it must be a Hetzner location such as fsn1"))
	}
	if cfg.Image == "" {
		problems = append(problems, errors.New("image is empty; it must be an image name or ID such as ubuntu-24.04"))
	}
	if cfg.RetryMax < 0 {
		problems = append(problems, errors.New("retryMax must not be negative"))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	token, err := cfg.Credentials.ResolveToken(ctx, secrets, ProviderName)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg}
	if cfg.ClusterJoin != "" {
		if p.userData, err = cfg.ClusterJoin.Resolve(ctx, secrets); err != nil {
			return nil, err
		}
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
	if len(p.cfg.Catalog) > 0 {
		return slices.Clone(p.cfg.Catalog), nil
	}
	return catalogs.Hetzner(), nil
}
