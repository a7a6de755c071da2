package lightsail

import "github.com/hanzoai/visor-fleet/connectors"

// Kind registers Lightsail with a worker's clusters file (section
// "lightsail").
var Kind = connectors.StatelessKind[Config](ProviderName, New, Catalog)

// Validate reports what is wrong in a clusters file's lightsail section.
func (c *Config) Validate(p connectors.Problems) {
	connectors.CheckRef(p, "credentials", c.Credentials, true)
	connectors.CheckRef(p, "clusterJoin", c.ClusterJoin, false)
	connectors.Required(p, "region", c.Region, "an AWS region such as us-east-1")
	connectors.Required(p, "availabilityZone", c.AvailabilityZone, "a zone of the region such as us-east-1a")
	connectors.Required(p, "blueprintID", c.BlueprintID, "a Lightsail OS blueprint such as ubuntu_24_04")
}

// CredentialRefs are the section's references, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials, &c.ClusterJoin}
}
