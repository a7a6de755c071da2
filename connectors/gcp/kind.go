package gcp

import (
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Kind registers Google Compute Engine with a worker's clusters file
// (section "gcp").
var Kind = connectors.StatelessKind[Config](ProviderName, New, Catalog)

// Validate reports what is wrong in a clusters file's gcp section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	c.CheckJoin(p)
	connectors.Required(p, "project", c.Project, "the Google Cloud project ID")
	connectors.Required(p, "zone", c.Zone, "a Compute Engine zone such as us-central1-a")
	connectors.Required(p, "image", c.Image, "a boot image or family, e.g. projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64")
	connectors.NotNegative(p, "bootDiskGB", c.BootDiskGB)
	if c.Zone != "" && strings.Count(c.Zone, "-") < 2 {
		p.Add("zone", "%q is not a zone such as us-central1-a", c.Zone)
	}
}

// CredentialRefs are the section's references, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials, &c.ClusterJoin}
}
