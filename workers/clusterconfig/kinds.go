package clusterconfig

import (
	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/aliyun"
	"github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/azure"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/connectors/gcp"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/connectors/kvm"
	"github.com/hanzoai/visor-fleet/connectors/kwok"
	"github.com/hanzoai/visor-fleet/connectors/lightsail"
	"github.com/hanzoai/visor-fleet/connectors/proxmox"
	"github.com/hanzoai/visor-fleet/connectors/vsphere"
)

// Provider kinds a cluster can name.
const (
	DigitalOcean = digitalocean.ProviderName
	AWS          = aws.ProviderName
	Hetzner      = hetzner.ProviderName
	VSphere      = vsphere.ProviderName
	Azure        = azure.ProviderName
	Proxmox      = proxmox.ProviderName
	Aliyun       = aliyun.ProviderName
	KVM          = kvm.ProviderName
	GCP          = gcp.ProviderName
	Lightsail    = lightsail.ProviderName
	Kwok         = kwok.ProviderName
	Sim          = "sim"
)

// Providers lists the built-in kinds in the order error messages name
// them. Adding a provider is one line here: its package's Kind.
var Providers = register(
	digitalocean.Kind,
	aws.Kind,
	hetzner.Kind,
	vsphere.Kind,
	azure.Kind,
	kwok.Kind,
	simKind,
	proxmox.Kind,
	aliyun.Kind,
	kvm.Kind,
	gcp.Kind,
	lightsail.Kind,
)

func register(kinds ...connectors.Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		connectors.Register(k)
		names[i] = k.Name
	}
	return names
}
