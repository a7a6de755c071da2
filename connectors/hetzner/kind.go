package hetzner

import (
	"github.com/hanzoai/visor-fleet/connectors"

	"github.com/hanzoai/visor-fleet/catalogs"
)

// Kind registers Hetzner Cloud with a worker's clusters file (section
// "hetzner").
var Kind = connectors.StatelessKind[Config](ProviderName, New, catalogs.Hetzner)

// Validate reports what is wrong in a clusters file's hetzner section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	c.CheckJoin(p)
	connectors.Required(p, "location", c.Location, "a Hetzner location such as fsn1")
	connectors.Required(p, "image", c.Image, "an image name or ID such as ubuntu-24.04")
	connectors.NotNegative(p, "retryMax", c.RetryMax)
}

// CredentialRefs are the section's references, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials, &c.ClusterJoin}
}
