// Package gcp is the Google Compute Engine connector. A node group is a
// zonal managed instance group (MIG), one per pool and machine type, whose
// target size is the group's target: this is the GCE shape of the
// NodeGroup contract (cluster-autoscaler's GCE provider scales MIGs the
// same way), since a MIG keeps its target apart from the instances it
// runs, resize sets the target, and deleteInstances removes the named
// instances and lowers the target by as many, so none is replaced. Plain
// instances tagged with a label would leave the connector to keep the
// count and to replace failed machines itself.
//
// Each MIG boots from an instance template of its own (the pool's machine
// type, boot disk, image, network and cluster-join metadata), and both are
// named from the pool and machine type, so a create whose answer was lost
// meets, when retried, the template and group the first call made (Compute
// refuses a second resource of one name) instead of making a second set.
// Every mutating call also carries a requestId derived from the decision's
// idempotency key, which Compute uses to answer a repeat with the first
// call's operation. Operations that finish later are waited for.
//
// The group's pool, machine type and labels are kept in the MIG's
// description (Compute labels cannot spell Kubernetes label keys); MIGs
// are found by the pool's name prefix and recognised by that description.
// Instances are labelled visor-pool and visor-group for whoever reads the
// project by label. Kubernetes node labels and taints come from the
// cluster-join user data, as on Hetzner. The Kubernetes node name is the
// instance name (the VM's hostname).
//
// Instances a MIG cannot create (QUOTA_EXCEEDED, ZONE_RESOURCE_POOL_EXHAUSTED)
// stay in it as CREATING records that the MIG retries for ever; a create or
// scale-up that meets them deletes them, which lowers the target back to
// what runs, and answers the typed error.
package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/option"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this package.
const ProviderName = "gcp"

// Config says which project and zone groups live in, what they boot and
// where the secrets live.
type Config struct {
	// Credentials locates a service account key (the JSON file the console
	// or `gcloud iam service-accounts keys create` writes), for an account
	// with roles/compute.instanceAdmin.v1 on the project (and
	// roles/iam.serviceAccountUser on ServiceAccount, when set).
	connectors.CommonConfig
	// JoinConfig's clusterJoin is the cloud-init user data.
	connectors.JoinConfig
	Project string `json:"project"`
	// Zone is where the groups' instances run, e.g. us-central1-a.
	Zone string `json:"zone"`
	// Image is the boot image or image family, e.g.
	// projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64;
	// ImageArm64 the one for Arm machine types (t2a, c4a), required only
	// when the catalog holds them and a pool asks for one.
	Image      string `json:"image"`
	ImageArm64 string `json:"imageArm64,omitempty"`
	// Network and Subnetwork are the VPC and subnet instances join
	// (default: the project's default network and its subnet in the region).
	Network    string `json:"network,omitempty"`
	Subnetwork string `json:"subnetwork,omitempty"`
	// ExternalIP gives each instance an ephemeral public address; without
	// it the subnet needs Cloud NAT or Private Google Access.
	ExternalIP bool `json:"externalIP,omitempty"`
	// NetworkTags are the firewall tags every instance carries.
	NetworkTags []string `json:"networkTags,omitempty"`
	// ServiceAccount is the email of the service account instances run as
	// (none when empty).
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// BootDiskGB (default 100) and BootDiskType (default pd-balanced) are
	// every instance's boot disk, the catalog's root disk.
	BootDiskGB   int    `json:"bootDiskGB,omitempty"`
	BootDiskType string `json:"bootDiskType,omitempty"`
	// Endpoint overrides the Compute API's base URL (a Private Service
	// Connect endpoint, a loopback fake), e.g. https://compute.example/compute/v1/.
	Endpoint string `json:"endpoint,omitempty"`
}

// Options are what a test hands the connector; a worker leaves them
// empty. The service account key's token_uri says where it logs in.
type Options struct {
	// PollInterval is how often an unfinished operation is waited on
	// again (default 2 s), AttemptWait how long a scale-up watches its new
	// instances for a refusal before it answers (default 20 s).
	PollInterval, AttemptWait time.Duration
}

// Provider implements connectors.Provider for managed instance groups.
type Provider struct {
	cfg      Config
	svc      *compute.Service
	userData string
	poll     time.Duration
	attempt  time.Duration
}

var _ connectors.Provider = (*Provider)(nil)

// New checks cfg, resolves the service account key and the cluster-join
// user data inside the worker, and builds the Compute client. It makes no
// API call: a key Google refuses surfaces on the first call as a
// Permanent error naming the reference.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	return NewWith(ctx, cfg, secrets, Options{})
}

// NewWith is New with test options.
func NewWith(ctx context.Context, cfg Config, secrets connectors.SecretReader, opts Options) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, invalid("configure", err)
	}
	key, err := cfg.Credentials.Resolve(ctx, secrets)
	if err != nil {
		return nil, err
	}
	if err := checkServiceAccountKey(key); err != nil {
		return nil, invalid("configure", fmt.Errorf("credential %s: %w", cfg.Credentials, err))
	}
	p := &Provider{cfg: cfg, poll: opts.PollInterval, attempt: opts.AttemptWait}
	if p.poll <= 0 {
		p.poll = 2 * time.Second
	}
	if p.attempt <= 0 {
		p.attempt = 20 * time.Second
	}
	if p.userData, err = cfg.UserData(ctx, secrets); err != nil {
		return nil, err
	}
	copts := []option.ClientOption{option.WithAuthCredentialsJSON(option.ServiceAccount, []byte(key)), option.WithUserAgent("visor-fleet")}
	if cfg.Endpoint != "" {
		copts = append(copts, option.WithEndpoint(cfg.Endpoint))
	}
	if p.svc, err = compute.NewService(ctx, copts...); err != nil {
		return nil, invalid("configure", fmt.Errorf("credential %s is not a usable service account key", cfg.Credentials))
	}
	return p, nil
}

// checkServiceAccountKey reads the key's form only; errors never echo it.
func checkServiceAccountKey(key string) error {
	var f struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if err := json.Unmarshal([]byte(key), &f); err != nil {
		return errors.New("must hold a service account key file (JSON)")
	}
	if f.Type != "service_account" || f.ClientEmail == "" || f.PrivateKey == "" {
		return errors.New(`must be a service account key: "type": "service_account" with client_email and private_key`)
	}
	return nil
}

// Name is "gcp".
func (p *Provider) Name() string { return ProviderName }

// Catalog returns the configured catalog, or the built-in one with the
// configured boot disk as every size's root disk.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return p.cfg.CatalogOr(catalogWithDisk(int64(p.bootDiskGB()))), nil
}

func (p *Provider) bootDiskGB() int {
	if p.cfg.BootDiskGB > 0 {
		return p.cfg.BootDiskGB
	}
	return defaultBootDiskGB
}

// region is the zone's region: us-central1 of us-central1-a.
func (p *Provider) region() string { return p.cfg.Zone[:strings.LastIndex(p.cfg.Zone, "-")] }

func invalid(op string, err error) error {
	return errclass.New(errclass.Permanent, ProviderName, op, err)
}
