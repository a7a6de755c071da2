package lightsail

import (
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Kind registers Lightsail with a worker's clusters file (section
// "lightsail").
var Kind = connectors.StatelessKind[Config](ProviderName, New, Catalog)

// Validate reports what is wrong in a clusters file's lightsail section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	c.CheckJoin(p)
	connectors.Required(p, "region", c.Region, "an AWS region such as us-east-1")
	connectors.Required(p, "availabilityZone", c.AvailabilityZone, "a zone of the region such as us-east-1a")
	connectors.Required(p, "blueprintID", c.BlueprintID, "a Lightsail OS blueprint such as ubuntu_24_04")
	if c.AvailabilityZone != "" && c.Region != "" && !strings.HasPrefix(c.AvailabilityZone, c.Region) {
		p.Add("availabilityZone", "%s is not in region %s", c.AvailabilityZone, c.Region)
	}
	if !slices.Contains([]string{"", "dualstack", "ipv4", "ipv6"}, c.IPAddressType) {
		p.Add("ipAddressType", `%q must be "dualstack", "ipv4" or "ipv6"`, c.IPAddressType)
	}
}

// CredentialRefs are the section's references, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials, &c.ClusterJoin}
}
