package vsphere

import (
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Kind registers vSphere with a worker's clusters file (section
// "vsphere"). Its sizes are the configured templates, so it has no
// built-in catalog.
var Kind = connectors.ClosingKind[Config](ProviderName, New, nil)

// Validate reports what is wrong in a clusters file's vsphere section.
func (c *Config) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	connectors.Required(p, "endpoint", c.Endpoint, "the vCenter URL or host name")
	connectors.Required(p, "folder", c.Folder, "the inventory folder pools' VMs go under")
	if len(c.Templates) == 0 {
		p.Add("templates", "is empty; each size is a template VM")
	}
	for i, t := range c.Templates {
		if err := validSize(t.Name); err != nil {
			p.Add(fmt.Sprintf("templates[%d].name", i), "%v", err)
		}
		connectors.Required(p, fmt.Sprintf("templates[%d].path", i), t.Path, "the template VM's inventory path")
	}
	if len(c.Templates) > 0 {
		if _, err := c.shapeCatalog(); err != nil {
			p.Add("templates", "%v", err)
		}
	}
}
