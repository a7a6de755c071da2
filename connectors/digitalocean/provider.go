// Package digitalocean is the DOKS connector: the node pools of one
// DigitalOcean Kubernetes cluster are the node groups, a pool belongs to a
// Visor pool when its hanzo.ai/pool label says so, and the idempotency key of
// the call that created it rides on the pool as a tag.
package digitalocean

import (
	"context"

	"github.com/digitalocean/godo"
	"golang.org/x/oauth2"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this connector.
const ProviderName = "digitalocean"

// Config says which cluster to act on and where the API token lives.
type Config struct {
	// Credentials locates the API token.
	connectors.CommonConfig
	// BaseURL overrides the API endpoint (tests point it at a loopback fake).
	BaseURL string `json:"baseURL,omitempty"`
	// ClusterID is the DOKS cluster UUID.
	ClusterID string `json:"clusterID"`
	// RetryMax turns on godo's own retries of 429 and 5xx answers inside one
	// call. Zero leaves retrying to the activity's retry policy. Either way a
	// repeated create is reconciled by its tag.
	RetryMax int `json:"retryMax,omitempty"`
}

// Provider implements connectors.Provider for DOKS.
type Provider struct {
	cfg    Config
	client *godo.Client
}

var _ connectors.Provider = (*Provider)(nil)

// New resolves the credential and builds the API client. A missing or
// unreadable credential is a Permanent error naming the reference.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	token, err := cfg.Credentials.ResolveToken(ctx, secrets, ProviderName)
	if err != nil {
		return nil, err
	}
	// godo's retrying transport wraps an oauth2 transport it finds on the
	// client, so the token has to travel that way.
	httpClient := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}))
	opts := []godo.ClientOpt{godo.SetUserAgent("visor-fleet")}
	if cfg.BaseURL != "" {
		opts = append(opts, godo.SetBaseURL(cfg.BaseURL))
	}
	if cfg.RetryMax > 0 {
		opts = append(opts, godo.WithRetryAndBackoffs(godo.RetryConfig{RetryMax: cfg.RetryMax}))
	}
	client, err := godo.New(httpClient, opts...)
	if err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	return &Provider{cfg: cfg, client: client}, nil
}

// Name is "digitalocean".
func (p *Provider) Name() string { return ProviderName }

// Catalog returns the configured sizes, or the built-in
// DigitalOcean catalog.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return p.cfg.CatalogOr(catalogs.DigitalOcean()), nil
}
