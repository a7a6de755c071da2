package kvm

import (
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/poolgroup"
)

// Kind registers KVM (libvirt) with a worker's clusters file (section
// "kvm"). Its sizes are the configured templates, so it has no built-in
// catalog; Release closes the libvirt connection.
var Kind = connectors.ClosingKind[Config](ProviderName, New, nil)

// Validate reports what is wrong in a clusters file's kvm section.
func (c *Config) Validate(p connectors.Problems) {
	connectors.Required(p, "uri", c.URI, "the libvirt URI, e.g. qemu:///system")
	if c.Socket != "" && c.Address != "" {
		p.Add("address", "is set together with socket; give one")
	}
	if len(c.Templates) == 0 {
		p.Add("templates", "is empty; each size is a template domain")
	}
	for i, t := range c.Templates {
		if err := poolgroup.ValidSize(t.Name); err != nil {
			p.Add(fmt.Sprintf("templates[%d].name", i), "%v", err)
		}
		connectors.Required(p, fmt.Sprintf("templates[%d].domain", i), t.Domain, "the template domain's name")
	}
	if len(c.Templates) > 0 {
		if _, err := c.shapeCatalog(); err != nil {
			p.Add("templates", "%v", err)
		}
	}
}
