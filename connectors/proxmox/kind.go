package proxmox

import (
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// Kind registers Proxmox VE with a worker's clusters file (section
// "proxmox"). Its sizes are the configured templates, so it has no
// built-in catalog.
var Kind = connectors.StatelessKind[Config](ProviderName, New, nil)

// Validate reports what is wrong in a clusters file's proxmox section.
func (c *Config) Validate(p connectors.Problems) {
	connectors.CheckRef(p, "credentials", c.Credentials, true)
	connectors.Required(p, "endpoint", c.Endpoint, "the API's URL, e.g. https://pve1:8006/api2/json")
	if len(c.Templates) == 0 {
		p.Add("templates", "is empty; each size is a template VM")
	}
	for i, t := range c.Templates {
		if err := poolgroup.ValidSize(t.Name); err != nil {
			p.Add(fmt.Sprintf("templates[%d].name", i), "%v", err)
		}
		if t.VMID < 100 {
			p.Add(fmt.Sprintf("templates[%d].vmid", i), "must be the template VM's ID (100 or more), got %d", t.VMID)
		}
		connectors.Required(p, fmt.Sprintf("templates[%d].node", i), t.Node, "the cluster node holding the template")
	}
}

// CredentialRefs is the section's one reference, for the loader to anchor.
func (c *Config) CredentialRefs() []*connectors.CredentialRef {
	return []*connectors.CredentialRef{&c.Credentials}
}
