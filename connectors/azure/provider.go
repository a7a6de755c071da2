// Package azure is the Azure connector: a node group is a Virtual Machine
// Scale Set (Uniform orchestration, manual upgrades) whose capacity is the
// group's target, one per pool and VM size, named from both so that a
// repeated create, however its first answer was lost, meets the same scale
// set (ARM's PUT is idempotent by name) instead of making a second one.
// Scale sets are found by their pool tag; Azure lowers the capacity itself
// when named instances are deleted, so they are never replaced. A group's
// labels are kept as the scale set's tags (a label's "/" written ":");
// the nodes' Kubernetes labels and taints come from the cluster-join
// custom data, as on Hetzner.
package azure

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// ProviderName is the provider part of pool keys served by this connector.
const ProviderName = "azure"

// Config says which subscription and resource group scale sets live in,
// what they boot and where the secrets live.
type Config struct {
	// Credentials locates a service principal as TENANT_ID:CLIENT_ID:SECRET.
	connectors.CommonConfig
	// JoinConfig's clusterJoin is the cloud-init custom data.
	connectors.JoinConfig
	SubscriptionID string `json:"subscriptionID"`
	ResourceGroup  string `json:"resourceGroup"`
	// Location is the region, e.g. westeurope.
	Location string `json:"location"`
	// SubnetID is the ARM ID of the subnet new scale sets' NICs join.
	SubnetID string `json:"subnetID"`
	// Image is an image's or gallery image version's ARM ID, or
	// PUBLISHER:OFFER:SKU:VERSION of a marketplace image.
	Image string `json:"image"`
	// AdminUsername and SSHPublicKey are the Linux login every VM gets
	// (Azure requires one); password login is off.
	AdminUsername string `json:"adminUsername,omitempty"`
	SSHPublicKey  string `json:"sshPublicKey"`
	// AuthorityHost overrides Microsoft Entra ID's login host (a sovereign
	// cloud or Azure Stack).
	AuthorityHost string `json:"authorityHost,omitempty"`
	// RetryMax turns on the SDK's own retries inside one call; zero leaves
	// retrying to the activity's retry policy.
	RetryMax int `json:"retryMax,omitempty"`
}

// Options are what a test hands the SDK: a transport (the armcompute fake
// server) and how often long-running operations are polled. A worker
// leaves them empty.
type Options struct {
	Transport     policy.Transporter
	PollFrequency time.Duration
}

// Provider implements connectors.Provider for Azure scale sets.
type Provider struct {
	cfg        Config
	catalog    []types.InstanceType
	customData string
	sets       *armcompute.VirtualMachineScaleSetsClient
	vms        *armcompute.VirtualMachineScaleSetVMsClient
	poll       time.Duration
}

var _ connectors.Provider = (*Provider)(nil)

// New checks cfg, resolves the credential and cluster-join references and
// builds the clients. It makes no API call: a secret Entra ID refuses
// surfaces on the first call as a Permanent error naming the reference.
func New(ctx context.Context, cfg Config, secrets connectors.SecretReader) (*Provider, error) {
	return NewWith(ctx, cfg, secrets, Options{})
}

// NewWith is New with SDK options.
func NewWith(ctx context.Context, cfg Config, secrets connectors.SecretReader, opts Options) (*Provider, error) {
	if err := connectors.ConfigError(&cfg); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	secret, err := cfg.Credentials.Resolve(ctx, secrets)
	if err != nil {
		return nil, err
	}
	principal, err := parsePrincipal(secret)
	if err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", errors.New("credential "+string(cfg.Credentials)+": "+err.Error()))
	}
	p := &Provider{cfg: cfg, catalog: cfg.CatalogOr(Catalog()), poll: opts.PollFrequency}
	if p.poll <= 0 {
		p.poll = 5 * time.Second
	}
	if p.customData, err = cfg.UserData(ctx, secrets); err != nil {
		return nil, err
	}
	client := azcore.ClientOptions{Transport: opts.Transport, Retry: policy.RetryOptions{MaxRetries: -1}}
	if cfg.RetryMax > 0 {
		client.Retry.MaxRetries = int32(cfg.RetryMax)
	}
	idOpts := &azidentity.ClientSecretCredentialOptions{ClientOptions: client}
	if cfg.AuthorityHost != "" {
		idOpts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: cfg.AuthorityHost, Services: cloud.AzurePublic.Services}
		idOpts.DisableInstanceDiscovery = true
	}
	cred, err := azidentity.NewClientSecretCredential(principal.tenant, principal.client, principal.secret, idOpts)
	if err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", errors.New("credential "+string(cfg.Credentials)+" is not a usable service principal"))
	}
	armOpts := &arm.ClientOptions{ClientOptions: client}
	if p.sets, err = armcompute.NewVirtualMachineScaleSetsClient(cfg.SubscriptionID, cred, armOpts); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	if p.vms, err = armcompute.NewVirtualMachineScaleSetVMsClient(cfg.SubscriptionID, cred, armOpts); err != nil {
		return nil, errclass.New(errclass.Permanent, ProviderName, "configure", err)
	}
	return p, nil
}

// Name is "azure".
func (p *Provider) Name() string { return ProviderName }

// Catalog returns the configured sizes, or the built-in Azure catalog.
func (p *Provider) Catalog(context.Context) ([]types.InstanceType, error) {
	return slices.Clone(p.catalog), nil
}

func (p *Provider) adminUsername() string {
	if p.cfg.AdminUsername != "" {
		return p.cfg.AdminUsername
	}
	return "visor"
}
