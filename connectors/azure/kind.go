package azure

import "github.com/hanzoai/visor-fleet/connectors"

// Kind registers Azure with a worker's clusters file (section "azure").
var Kind = connectors.StatelessKind[Config](ProviderName, New, Catalog)

// Validate reports what is wrong in a clusters file's azure section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	c.CheckJoin(p)
	connectors.Required(p, "subscriptionID", c.SubscriptionID, "the subscription's ID")
	connectors.Required(p, "resourceGroup", c.ResourceGroup, "the resource group scale sets live in")
	connectors.Required(p, "location", c.Location, "an Azure region such as westeurope")
	connectors.Required(p, "subnetID", c.SubnetID, "the ARM ID of the subnet VMs join")
	connectors.Required(p, "image", c.Image, "an image ARM ID or PUBLISHER:OFFER:SKU:VERSION")
	connectors.Required(p, "sshPublicKey", c.SSHPublicKey, "the OpenSSH public key every VM accepts")
	connectors.NotNegative(p, "retryMax", c.RetryMax)
}

// CredentialRefs are the section's references, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials, &c.ClusterJoin}
}
