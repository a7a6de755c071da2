package digitalocean

import (
	"github.com/hanzoai/visor-fleet/connectors"

	"github.com/hanzoai/visor-fleet/catalogs"
)

// Kind registers DOKS with a worker's clusters file (section "digitalocean").
var Kind = connectors.StatelessKind[Config](ProviderName, New, catalogs.DigitalOcean)

// Validate reports what is wrong in a clusters file's digitalocean section.
func (c *Config) Validate(p connectors.Problems) {
	connectors.CheckRef(p, "credentials", c.Credentials, true)
	connectors.Required(p, "clusterID", c.ClusterID, "the DOKS cluster UUID")
	connectors.NotNegative(p, "retryMax", c.RetryMax)
}

// CredentialRefs is the section's one reference, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials}
}
