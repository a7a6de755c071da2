package digitalocean

import (
	"github.com/hanzoai/visor-fleet/connectors"

	"github.com/hanzoai/visor-fleet/catalogs"
)

// Kind registers DOKS with a worker's clusters file (section "digitalocean").
var Kind = connectors.StatelessKind[Config](ProviderName, New, catalogs.DigitalOcean)

// Validate reports what is wrong in a clusters file's digitalocean section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	connectors.Required(p, "clusterID", c.ClusterID, "the DOKS cluster UUID")
	connectors.NotNegative(p, "retryMax", c.RetryMax)
}
